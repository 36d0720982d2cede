// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @resize
// CHECK: "onnx.resize"{{.*}} -> tensor<1x3x10x10xf32>
// CHECK: "onnx.resize"{{.*}} -> tensor<?x3x8x8xf32>
// CHECK: "onnx.resize"{{.*}} -> tensor<?x3x?x?xf32>
// CHECK: "onnx.upsample"{{.*}} -> tensor<?x3x10x21xf32>
func.func @resize(%x: tensor<1x3x5x7xf32>, %y: tensor<?x3x5x7xf32>, %dyn: tensor<2xi64>) -> !onnx.unknown {
  %sc = "onnx.constant"() {value = dense<[1.0, 1.0, 2.0, 1.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.resize"(%x, %sc) {antialias = 0 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x3x5x7xf32>, tensor<4xf32>) -> !onnx.unknown
  %sz = "onnx.constant"() {value = dense<[8, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1 = "onnx.resize"(%y, %sz) {antialias = 0 : si64, axes = array<i64: 2, 3>, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 0, 1>} : (tensor<?x3x5x7xf32>, tensor<2xi64>) -> !onnx.unknown
  %2 = "onnx.resize"(%y, %dyn) {antialias = 0 : si64, axes = array<i64: 2, 3>, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 0, 1>} : (tensor<?x3x5x7xf32>, tensor<2xi64>) -> !onnx.unknown
  %us = "onnx.constant"() {value = dense<[1.0, 1.0, 2.0, 3.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %3 = "onnx.upsample"(%y, %us) {mode = "nearest"} : (tensor<?x3x5x7xf32>, tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
