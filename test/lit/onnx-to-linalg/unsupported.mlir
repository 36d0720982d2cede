// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): Det (nodes: {{.*}}); Sin (nodes: {{.*}})
func.func @f(%x: tensor<3x3xf32>) -> (tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = "onnx.det"(%x) : (tensor<3x3xf32>) -> tensor<f32>
  %1 = "onnx.relu"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "onnx.sin"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0, %1, %2 : tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>
}
