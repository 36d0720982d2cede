// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Bilinear, half_pixel, scales [1, 1, 2, 2]: the batch dim passes through,
// each resized axis maps index -> f64 coordinate -> 2 clamped taps.
// CHECK-LABEL: func.func @resize_linear
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x8x8xf32>)
// CHECK: linalg.index 2
// CHECK: arith.sitofp {{.*}} : i64 to f64
// CHECK: math.floor
// CHECK: arith.minsi
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear(%x: tensor<?x2x4x4xf32>) -> tensor<?x2x8x8xf32> {
  %s = "onnx.constant"() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.resize"(%x, %s) {antialias = 0 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<?x2x4x4xf32>, tensor<4xf32>) -> tensor<?x2x8x8xf32>
  return %0 : tensor<?x2x8x8xf32>
}

// Nearest (asymmetric, floor): one tap per axis.
// CHECK-LABEL: func.func @resize_nearest
// CHECK: math.floor
// CHECK-COUNT-1: tensor.extract %arg0
// CHECK-NOT: tensor.extract %arg0
// CHECK: return
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x6xf32> {
  %s = "onnx.constant"() {value = dense<[1, 1, 4, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.resize"(%x, %s) {antialias = 0 : si64, coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 0, 0, 1>} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}
