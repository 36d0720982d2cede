// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered.
// CHECK: error: 2 unsupported op type(s) (no lowering): ImageDecoder (nodes: {{.*}}); RoiAlign (v16) (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%r: tensor<1x2x4x4xf32>, %q: tensor<3x4xf32>, %k: tensor<3xi64>, %b: tensor<100xui8>, %x: tensor<2xf32>) -> (tensor<3x2x1x1xf32>, tensor<?x?x3xui8>, tensor<2xf32>) {
  %0 = "onnx.roi_align_v16"(%r, %q, %k) {coordinate_transformation_mode = "half_pixel", mode = "avg", output_height = 1 : si64, output_width = 1 : si64, sampling_ratio = 0 : si64, spatial_scale = 1.000000e+00 : f32} : (tensor<1x2x4x4xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x1x1xf32>
  %1 = "onnx.image_decoder"(%b) {pixel_format = "RGB"} : (tensor<100xui8>) -> tensor<?x?x3xui8>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<3x2x1x1xf32>, tensor<?x?x3xui8>, tensor<2xf32>
}
