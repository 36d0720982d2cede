// RUN: %opt %s --split-input-file --channels-last-convs | FileCheck %s
// In a bf16 module whose target has AMX-BF16 (onnx_mlir_py.amx_bf16), each
// eligible Conv becomes NhwcConv between transposes, which are pushed
// through the elementwise ops (a constant operand relaid out: [C, 1, 1] is
// [1, C, 1, 1] by numpy's rank padding, [1, 1, 1, C] channels-last; a [W]
// constant broadcasts over W: [1, 1, 1, W] -> [1, 1, W, 1]) and cancel between the
// convs: a Transpose at the input and one at the output are left.

module attributes {onnx_mlir_py.amx_bf16, onnx_mlir_py.precision = "bf16"} {
// CHECK-LABEL: func.func @conv_add_relu_conv
// CHECK: %[[XT:.*]] = "onnx.transpose_v13"(%arg0) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x6x6xf32>) -> tensor<1x6x6x3xf32>
// CHECK: %[[C1:.*]] = "com_microsoft.nhwc_conv"(%[[XT]], %{{.*}}) {{.*}} -> tensor<1x6x6x4xf32>
// CHECK: %[[B:.*]] = "onnx.constant"() {{.*}} -> tensor<1x1x1x4xf32>
// CHECK: %[[A:.*]] = "onnx.add"(%[[C1]], %[[B]]) : (tensor<1x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: %[[V:.*]] = "onnx.constant"() {{.*}} -> tensor<1x1x6x1xf32>
// CHECK: %[[M:.*]] = "onnx.mul"(%[[A]], %[[V]]) : (tensor<1x6x6x4xf32>, tensor<1x1x6x1xf32>) -> tensor<1x6x6x4xf32>
// CHECK: %[[R:.*]] = "onnx.relu"(%[[M]]) : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: %[[C2:.*]] = "com_microsoft.nhwc_conv"(%[[R]], %{{.*}}) {{.*}} -> tensor<1x6x6x2xf32>
// CHECK: %[[Y:.*]] = "onnx.transpose_v13"(%[[C2]]) {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NOT: onnx.transpose
// CHECK: return %[[Y]]
func.func @conv_add_relu_conv(%x: tensor<1x3x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %w1 = "onnx.constant"() {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %w2 = "onnx.constant"() {value = dense<0.25> : tensor<2x4x3x3xf32>} : () -> tensor<2x4x3x3xf32>
  %b = "onnx.constant"() {value = dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>} : () -> tensor<4x1x1xf32>
  %v = "onnx.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>} : () -> tensor<6xf32>
  %0 = "onnx.conv_v11"(%x, %w1) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = "onnx.add"(%0, %b) : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %2 = "onnx.mul"(%1, %v) : (tensor<1x4x6x6xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32>
  %3 = "onnx.relu"(%2) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %4 = "onnx.conv_v11"(%3, %w2) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  return %4 : tensor<1x2x6x6xf32>
}
}

// -----

// without the AMX mark (fp32, or a target without AMX-BF16): unchanged
module attributes {onnx_mlir_py.precision = "bf16"} {
// CHECK-LABEL: func.func @no_amx
// CHECK: "onnx.conv_v11"
// CHECK-NOT: nhwc_conv
func.func @no_amx(%x: tensor<1x3x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w1 = "onnx.constant"() {value = dense<0.5> : tensor<4x3x3x3xf32>} : () -> tensor<4x3x3x3xf32>
  %0 = "onnx.conv_v11"(%x, %w1) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
}
