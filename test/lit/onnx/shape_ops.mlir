// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @shape_ops
// CHECK: "onnx.shape"{{.*}} -> tensor<2xi64>
// CHECK: "onnx.size"{{.*}} -> tensor<i64>
// CHECK: "onnx.cast_v25"{{.*}} -> tensor<?x3x4xi32>
// CHECK: "onnx.non_zero"{{.*}} -> tensor<3x?xi64>
// Constants of any form fold to the one onnx.constant form.
// CHECK: "onnx.constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
// CHECK: "onnx.constant"() {value = dense<1.500000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK: "onnx.constant_of_shape"{{.*}} -> tensor<?x3xi32>
// CHECK: "onnx.one_hot_v11"{{.*}} -> tensor<?x5x3x4xf32>
func.func @shape_ops(%x: tensor<?x3x4xf32>, %v: tensor<2xf32>) -> !onnx.unknown {
  %0 = "onnx.shape"(%x) {start = 1 : si64} : (tensor<?x3x4xf32>) -> !onnx.unknown
  %1 = "onnx.size"(%x) : (tensor<?x3x4xf32>) -> !onnx.unknown
  %2 = "onnx.cast_v25"(%x) {to = 6 : si64, saturate = 1 : si64, round_mode = "up"} : (tensor<?x3x4xf32>) -> !onnx.unknown
  %3 = "onnx.non_zero"(%x) : (tensor<?x3x4xf32>) -> !onnx.unknown
  %4 = "onnx.constant_v13"() {value_ints = array<i64: 1, 2, 3>} : () -> !onnx.unknown
  %5 = "onnx.constant_v13"() {value_float = 1.5 : f32} : () -> !onnx.unknown
  %sk = "onnx.shape"(%x) {start = 0 : si64, end = -1 : si64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %6 = "onnx.constant_of_shape"(%sk) {value = dense<1> : tensor<1xi32>} : (tensor<2xi64>) -> !onnx.unknown
  %d = "onnx.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  %7 = "onnx.one_hot_v11"(%x, %d, %v) {axis = 1 : si64} : (tensor<?x3x4xf32>, tensor<i64>, tensor<2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
