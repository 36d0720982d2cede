// RUN: %opt %s --split-input-file --fold-constant-dequantize | FileCheck %s

// Per axis 0 with a zero point: (w - z[c]) * s[c] = [[(1-1)*0.5, (3-1)*0.5], [(-2+2)*2, (4+2)*2]].
// CHECK-LABEL: func.func @dq_per_axis
// CHECK: %[[W:.*]] = "onnx.constant"() {value = dense<{{\[\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}1.200000e+01]]]]> : tensor<2x2x1x1xf32>}
// CHECK-NOT: onnx.dequantize_linear
// CHECK: "onnx.conv_v11"(%arg0, %[[W]])
func.func @dq_per_axis(%arg0: tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %0 = "onnx.constant"() {value = dense<[[[[1]], [[3]]], [[[-2]], [[4]]]]> : tensor<2x2x1x1xi8>} : () -> tensor<2x2x1x1xi8>
  %1 = "onnx.constant"() {value = dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = "onnx.constant"() {value = dense<[1, -2]> : tensor<2xi8>} : () -> tensor<2xi8>
  %3 = "onnx.dequantize_linear_v13"(%0, %1, %2) {axis = 0 : si64} : (tensor<2x2x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x1x1xf32>
  %6 = "onnx.conv_v11"(%arg0, %3) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x2x1x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %6 : tensor<1x2x1x1xf32>
}

// -----
// A computed input: left for run time.
// CHECK-LABEL: func.func @dq_runtime
// CHECK: onnx.dequantize_linear_v13
func.func @dq_runtime(%arg0: tensor<4xui8>) -> tensor<4xf32> {
  %1 = "onnx.constant"() {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32>
  %2 = "onnx.constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
  %3 = "onnx.dequantize_linear_v13"(%arg0, %1, %2) {axis = 1 : si64} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
