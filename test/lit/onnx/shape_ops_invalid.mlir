// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'k0' (Constant): exactly one value attribute must be set, got 2 (value_float, value_int)
func.func @f() -> !onnx.unknown {
  %0 = "onnx.constant_v13"() {value_int = 1 : si64, value_float = 1.0 : f32} : () -> !onnx.unknown loc("k0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'r0' (Range): delta must not be 0
func.func @f(%a: tensor<i64>) -> !onnx.unknown {
  %d = "onnx.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.range_v11"(%a, %a, %d) : (tensor<i64>, tensor<i64>, tensor<i64>) -> !onnx.unknown loc("r0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'cos' (ConstantOfShape): input must be a 1-D shape, got rank 2
func.func @f(%s: tensor<1x2xi64>) -> !onnx.unknown {
  %0 = "onnx.constant_of_shape"(%s) : (tensor<1x2xi64>) -> !onnx.unknown loc("cos")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'oh' (OneHot): axis 3 is out of range for rank 3 (expected [-3, 2])
func.func @f(%i: tensor<2x3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) -> !onnx.unknown {
  %0 = "onnx.one_hot_v11"(%i, %d, %v) {axis = 3 : si64} : (tensor<2x3xi64>, tensor<i64>, tensor<2xf32>) -> !onnx.unknown loc("oh")
  return %0 : !onnx.unknown
}
