// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'lr' (LinearRegressor): coefficients has 5 values, not a multiple of 2 outputs
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.linear_regressor"(%x) {coefficients = array<f32: 1.0, 2.0, 3.0, 4.0, 5.0>, post_transform = "NONE", targets = 2 : si64} : (tensor<?x3xf32>) -> !onnx.unknown loc("lr")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'lc' (LinearClassifier): X has 3 features, the coefficients 2
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0:2 = "onnx_ml.linear_classifier"(%x) {classlabels_ints = array<i64: 0, 1>, coefficients = array<f32: 1.0, 2.0, 3.0, 4.0>, intercepts = array<f32: 0.0, 1.0>, multi_class = 0 : si64, post_transform = "NONE"} : (tensor<?x3xf32>) -> (!onnx.unknown, !onnx.unknown) loc("lc")
  return %0#1 : !onnx.unknown
}

// -----
// CHECK: error: node 'lp' (LinearClassifier): post_transform 'SIGMOID' is not one of NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT
func.func @f(%x: tensor<?x2xf32>) -> !onnx.unknown {
  %0:2 = "onnx_ml.linear_classifier"(%x) {classlabels_ints = array<i64: 0, 1>, coefficients = array<f32: 1.0, 2.0, 3.0, 4.0>, intercepts = array<f32: 0.0, 1.0>, multi_class = 0 : si64, post_transform = "SIGMOID"} : (tensor<?x2xf32>) -> (!onnx.unknown, !onnx.unknown) loc("lp")
  return %0#1 : !onnx.unknown
}
