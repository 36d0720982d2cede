// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'rz' (Resize): scales has 3 elements, expected 4 (input [1x3x5x7])
func.func @f(%x: tensor<1x3x5x7xf32>, %sc: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.resize"(%x, %sc) {antialias = 0 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x3x5x7xf32>, tensor<3xf32>) -> !onnx.unknown loc("rz")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rz2' (Resize): only one of 'scales' and 'sizes' can be given
func.func @f(%x: tensor<1x3x5x7xf32>, %sc: tensor<4xf32>, %sz: tensor<4xi64>) -> !onnx.unknown {
  %0 = "onnx.resize"(%x, %sc, %sz) {antialias = 0 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 1>} : (tensor<1x3x5x7xf32>, tensor<4xf32>, tensor<4xi64>) -> !onnx.unknown loc("rz2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'up' (Upsample): scales has 2 elements, expected one per input dim [1x3x5x7]
func.func @f(%x: tensor<1x3x5x7xf32>) -> !onnx.unknown {
  %0 = "onnx.upsample_v7"(%x) {mode = "nearest", scales = array<f32: 2.0, 2.0>} : (tensor<1x3x5x7xf32>) -> !onnx.unknown loc("up")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rz3' (Resize): antialias=1 needs mode 'linear' or 'cubic', got 'nearest' (as onnxruntime)
func.func @f(%x: tensor<1x3x5x7xf32>, %sc: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.resize"(%x, %sc) {antialias = 1 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x3x5x7xf32>, tensor<4xf32>) -> !onnx.unknown loc("rz3")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rz4' (Resize): attribute 'antialias' = 2: expected 0 or 1
func.func @f(%x: tensor<1x3x5x7xf32>, %sc: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.resize"(%x, %sc) {antialias = 2 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x3x5x7xf32>, tensor<4xf32>) -> !onnx.unknown loc("rz4")
  return %0 : !onnx.unknown
}
