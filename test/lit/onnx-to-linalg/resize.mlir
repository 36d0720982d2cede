// RUN: %opt %s --lower-to-linalg | FileCheck %s
// CHECK: #[[FLOORDIV:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 3)>

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

// Nearest (asymmetric, floor) by integer scales 2 and 3: one copy reading
// x[i // 2, j // 3] through its indexing map (FLOORDIV, checked first: the
// maps print at the top), no coordinate arithmetic.
// CHECK-LABEL: func.func @resize_nearest
// CHECK: linalg.generic {indexing_maps = [#[[FLOORDIV]], #{{.*}}]{{.*}} ins(%arg0
// CHECK-NOT: math.floor
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x6xf32> {
  %s = "onnx.constant"() {value = dense<[1, 1, 4, 6]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.resize"(%x, %s) {antialias = 0 : si64, coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 0, 0, 1>} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// Nearest (asymmetric, floor) by scales 2.5 and 1.5: the coordinate
// computed per axis, one tap per axis.
// CHECK-LABEL: func.func @resize_nearest_fractional
// CHECK: math.floor
// CHECK: math.floor
// CHECK-COUNT-1: tensor.extract %arg0
// CHECK-NOT: tensor.extract %arg0
// CHECK: return
func.func @resize_nearest_fractional(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x5x3xf32> {
  %s = "onnx.constant"() {value = dense<[1, 1, 5, 3]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.resize"(%x, %s) {antialias = 0 : si64, coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 0, 0, 1>} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x5x3xf32>
  return %0 : tensor<1x1x5x3xf32>
}

// antialias=1, linear, constant scales [1, 1, 0.5, 0.25]: the kernel widened
// by 1 / scale: 2 - 2 * (floor(-1 / s) + 1) taps = 4 and 8 (a nest of two
// scf.for carrying the weighted sum and the weight sum; the batch and
// channel axes read their index), weights max(1 - |s * (j - ratio)|, 0),
// the sum divided by the weights' sum.
// CHECK-LABEL: func.func @resize_antialias
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x2xf32>)
// CHECK: math.ceil
// CHECK: math.ceil
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4 {{.*}} -> (f64, f64)
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8 {{.*}} -> (f64, f64)
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: tensor.extract %arg0
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @resize_antialias(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x2xf32> {
  %s = "onnx.constant"() {value = dense<[1.0, 1.0, 0.5, 0.25]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = "onnx.resize"(%x, %s) {antialias = 1 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "linear", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x1x8x8xf32>, tensor<4xf32>) -> tensor<1x1x4x2xf32>
  return %0 : tensor<1x1x4x2xf32>
}

// antialias=1, cubic, scales known only at run time: s = min(scale, 1) and
// the tap count 2 - 2 * (floor(-2 / s) + 1) computed per axis in the body,
// the loops bounded by it.
// CHECK-LABEL: func.func @resize_antialias_run_time
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x?x?xf32>)
// CHECK: %[[S:.*]] = arith.minimumf
// CHECK: arith.divf %{{.*}}, %[[S]] : f64
// CHECK: math.floor
// CHECK: %[[N:.*]] = arith.index_cast {{.*}} : i64 to index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] {{.*}} -> (f64, f64)
func.func @resize_antialias_run_time(%x: tensor<1x1x?x?xf32>, %s: tensor<4xf32>) -> tensor<1x1x?x?xf32> {
  %0 = "onnx.resize"(%x, %s) {antialias = 1 : si64, coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = 0 : si64, extrapolation_value = 0.000000e+00 : f32, keep_aspect_ratio_policy = "stretch", mode = "cubic", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x1x?x?xf32>, tensor<4xf32>) -> tensor<1x1x?x?xf32>
  return %0 : tensor<1x1x?x?xf32>
}
