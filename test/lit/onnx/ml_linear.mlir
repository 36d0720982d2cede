// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @classifier
// CHECK: "onnx_ml.linear_classifier"{{.*}} -> (tensor<?xi64>, tensor<?x3xf32>)
func.func @classifier(%x: tensor<?x2xf32>) -> !onnx.unknown {
  %0:2 = "onnx_ml.linear_classifier"(%x) {classlabels_ints = array<i64: 1, 2, 3>, coefficients = array<f32: 1.0, 2.0, 3.0, 4.0, 5.0, 6.0>, intercepts = array<f32: 0.0, 1.0, 2.0>, multi_class = 0 : si64, post_transform = "NONE"} : (tensor<?x2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#1 : !onnx.unknown
}

// A binary classifier with one score column writes two.
// CHECK-LABEL: func.func @binary
// CHECK: "onnx_ml.linear_classifier"{{.*}} -> (tensor<4xi64>, tensor<4x2xf32>)
func.func @binary(%x: tensor<4x2xf32>) -> !onnx.unknown {
  %0:2 = "onnx_ml.linear_classifier"(%x) {classlabels_ints = array<i64: 0, 1>, coefficients = array<f32: 1.0, 2.0>, intercepts = array<f32: 0.5>, multi_class = 0 : si64, post_transform = "LOGISTIC"} : (tensor<4x2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#1 : !onnx.unknown
}

// CHECK-LABEL: func.func @regressor
// CHECK: "onnx_ml.linear_regressor"{{.*}} -> tensor<?x2xf32>
func.func @regressor(%x: tensor<?x3xf64>) -> !onnx.unknown {
  %0 = "onnx_ml.linear_regressor"(%x) {coefficients = array<f32: 1.0, 2.0, 3.0, 4.0, 5.0, 6.0>, post_transform = "NONE", targets = 2 : si64} : (tensor<?x3xf64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
