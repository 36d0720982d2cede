// RUN: %opt %s --split-input-file --fuse-qdq-conv | FileCheck %s
// A QDQ conv group (u8 activations, s8 per-channel weights, an int32 bias
// already dequantized to an exact f32 constant, a ReLU before the Q) becomes
// QLinearConv + Clip(., min=zy) in a module whose target has int8 kernels
// (onnx_mlir_py.int8_kernels); without the mark nothing changes.

// CHECK-LABEL: func.func @qdq_conv
// CHECK: %[[B:.*]] = "onnx.constant"() {value = dense<[100, -3, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]> : tensor<16xi32>}
// CHECK: %[[Y:.*]] = "onnx.q_linear_conv"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[B]])
// CHECK: "onnx.clip"(%[[Y]], %{{.*}})
// CHECK-NOT: onnx.conv
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}, onnx_mlir_py.int8_kernels} {
  func.func @qdq_conv(%x: tensor<1x4x5x5xui8>) -> tensor<1x16x5x5xui8> {
    %sx = "onnx.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
    %zx = "onnx.constant"() {value = dense<10> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.constant"() {value = dense<3> : tensor<16x4x3x3xi8>} : () -> tensor<16x4x3x3xi8>
    %sw = "onnx.constant"() {value = dense<2.500000e-01> : tensor<16xf32>} : () -> tensor<16xf32>
    %zw = "onnx.constant"() {value = dense<0> : tensor<16xi8>} : () -> tensor<16xi8>
    %b = "onnx.constant"() {value = dense<[12.5, -0.375, 0.0, 0.875, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.375, 1.5]> : tensor<16xf32>} : () -> tensor<16xf32>
    %sy = "onnx.constant"() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %zy = "onnx.constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %xd = "onnx.dequantize_linear_v13"(%x, %sx, %zx) {axis = 1 : si64} : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xf32>
    %wd = "onnx.dequantize_linear_v13"(%w, %sw, %zw) {axis = 0 : si64} : (tensor<16x4x3x3xi8>, tensor<16xf32>, tensor<16xi8>) -> tensor<16x4x3x3xf32>
    %c = "onnx.conv_v11"(%xd, %wd, %b) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<16x4x3x3xf32>, tensor<16xf32>) -> tensor<1x16x5x5xf32>
    %r = "onnx.relu"(%c) : (tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
    %q = "onnx.quantize_linear_v13"(%r, %sy, %zy) {axis = 1 : si64} : (tensor<1x16x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x16x5x5xui8>
    return %q : tensor<1x16x5x5xui8>
  }
}

// -----

// CHECK-LABEL: func.func @not_marked
// CHECK: onnx.conv
// CHECK-NOT: onnx.q_linear_conv
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
  func.func @not_marked(%x: tensor<1x4x5x5xui8>) -> tensor<1x16x5x5xui8> {
    %sx = "onnx.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
    %zx = "onnx.constant"() {value = dense<10> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.constant"() {value = dense<3> : tensor<16x4x3x3xi8>} : () -> tensor<16x4x3x3xi8>
    %sw = "onnx.constant"() {value = dense<2.500000e-01> : tensor<16xf32>} : () -> tensor<16xf32>
    %sy = "onnx.constant"() {value = dense<4.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %zy = "onnx.constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %xd = "onnx.dequantize_linear_v13"(%x, %sx, %zx) {axis = 1 : si64} : (tensor<1x4x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xf32>
    %wd = "onnx.dequantize_linear_v13"(%w, %sw) {axis = 0 : si64} : (tensor<16x4x3x3xi8>, tensor<16xf32>) -> tensor<16x4x3x3xf32>
    %c = "onnx.conv_v11"(%xd, %wd) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x5x5xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x5x5xf32>
    %q = "onnx.quantize_linear_v13"(%c, %sy, %zy) {axis = 1 : si64} : (tensor<1x16x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x16x5x5xui8>
    return %q : tensor<1x16x5x5xui8>
  }
}
