// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): Det (nodes: {{.*}}); ImageDecoder (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%i: tensor<4x3x3xf32>, %b: tensor<100xui8>, %x: tensor<2xf32>) -> (tensor<4xf32>, tensor<?x?x3xui8>, tensor<2xf32>) {
  %0 = "onnx.det"(%i) : (tensor<4x3x3xf32>) -> tensor<4xf32>
  %1 = "onnx.image_decoder"(%b) {pixel_format = "RGB"} : (tensor<100xui8>) -> tensor<?x?x3xui8>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<?x?x3xui8>, tensor<2xf32>
}
