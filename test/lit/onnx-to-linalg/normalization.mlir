// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @bn
// CHECK: linalg.generic {indexing_maps = [#map, #map1, #map1, #map1, #map1, #map]
// CHECK: math.rsqrt
func.func @bn(%x: tensor<?x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<?x3x4x4xf32> {
  %0 = "onnx.batch_normalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  return %0 : tensor<?x3x4x4xf32>
}
