// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): GlobalLpPool (v1) (nodes: {{.*}}); ImageDecoder (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%r: tensor<1x2x4x4xf32>, %q: tensor<3x2x1x1xf32>, %k: tensor<1x2x4x4xf32>, %b: tensor<100xui8>, %x: tensor<2xf32>) -> (tensor<1x2x1x1xf32>, tensor<?x?x3xui8>, tensor<2xf32>) {
  %0 = "onnx.global_lp_pool_v1"(%r) {p = 2.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %1 = "onnx.image_decoder"(%b) {pixel_format = "RGB"} : (tensor<100xui8>) -> tensor<?x?x3xui8>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<1x2x1x1xf32>, tensor<?x?x3xui8>, tensor<2xf32>
}
