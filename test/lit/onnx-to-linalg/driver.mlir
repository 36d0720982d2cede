// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): GlobalLpPool (v1) (nodes: {{.*}}); ai.onnx.ml.SVMRegressor (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%r: tensor<1x2x4x4xf32>, %q: tensor<3x2x1x1xf32>, %k: tensor<1x2x4x4xf32>, %b: tensor<4x1xf32>, %x: tensor<2xf32>) -> (tensor<1x2x1x1xf32>, tensor<4x1xf32>, tensor<2xf32>) {
  %0 = "onnx.global_lp_pool_v1"(%r) {p = 2.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %1 = "onnx_ml.svm_regressor"(%b) {coefficients = array<f32: 1.0>, kernel_type = "LINEAR", n_supports = 1 : si64, one_class = 0 : si64, post_transform = "NONE", rho = array<f32: 0.0>, support_vectors = array<f32: 1.0>} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<1x2x1x1xf32>, tensor<4x1xf32>, tensor<2xf32>
}
