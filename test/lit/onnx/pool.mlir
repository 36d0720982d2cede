// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @maxpool_indices
// CHECK: "onnx.max_pool"{{.*}} -> (tensor<?x3x4x4xf32>, tensor<?x3x4x4xi64>)
func.func @maxpool_indices(%x: tensor<?x3x8x8xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0:2 = "onnx.max_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}

// ceil_mode: ceil((8 - 3) / 2) + 1 = 4 (floor would give 3); dilations: k_eff = 5.
// CHECK-LABEL: func.func @maxpool_ceil_dilations
// CHECK: "onnx.max_pool_v12"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "onnx.max_pool_v12"{{.*}} -> tensor<1x3x3x3xf32>
// CHECK: "onnx.max_pool_v10"{{.*}} -> tensor<1x3x2x3xf32>
func.func @maxpool_ceil_dilations(%x: tensor<1x3x8x8xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.max_pool_v12"(%x) {auto_pad = "NOTSET", ceil_mode = 1 : si64, kernel_shape = array<i64: 3, 3>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> !onnx.unknown
  %1 = "onnx.max_pool_v12"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 3, 3>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> !onnx.unknown
  %2 = "onnx.max_pool_v10"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 3, 3>, dilations = array<i64: 2, 1>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// A last ceil_mode window that starts in the right padding is dropped
// (in 5, pads 1+1, kernel 2, stride 3): the v22 spec, and what onnxruntime and
// onnx.reference compute for v19 too (onnx.shape_inference keeps it for v19).
// CHECK-LABEL: func.func @ceil_mode_v22
// CHECK: "onnx.average_pool"{{.*}} -> tensor<1x1x2xf32>
// CHECK: "onnx.average_pool_v19"{{.*}} -> tensor<1x1x2xf32>
func.func @ceil_mode_v22(%x: tensor<1x1x5xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.average_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 1 : si64, count_include_pad = 1 : si64, kernel_shape = array<i64: 2>, pads = array<i64: 1, 1>, strides = array<i64: 3>} : (tensor<1x1x5xf32>) -> !onnx.unknown
  %1 = "onnx.average_pool_v19"(%x) {auto_pad = "NOTSET", ceil_mode = 1 : si64, count_include_pad = 1 : si64, kernel_shape = array<i64: 2>, pads = array<i64: 1, 1>, strides = array<i64: 3>} : (tensor<1x1x5xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// auto_pad: SAME_UPPER ceil(7/2) = 4, SAME_LOWER ceil(7/3) = 3, VALID (7-3)/2+1 = 3.
// CHECK-LABEL: func.func @pool_auto_pad
// CHECK: "onnx.average_pool_v7"{{.*}} -> tensor<?x3x4x4xf32>
// CHECK: "onnx.max_pool_v8"{{.*}} -> tensor<?x3x3x3xf32>
// CHECK: "onnx.lp_pool"{{.*}} -> tensor<?x3x3x3xf32>
func.func @pool_auto_pad(%x: tensor<?x3x7x7xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.average_pool_v7"(%x) {auto_pad = "SAME_UPPER", count_include_pad = 0 : si64, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<?x3x7x7xf32>) -> !onnx.unknown
  %1 = "onnx.max_pool_v8"(%x) {auto_pad = "SAME_LOWER", kernel_shape = array<i64: 2, 2>, storage_order = 0 : si64, strides = array<i64: 3, 3>} : (tensor<?x3x7x7xf32>) -> !onnx.unknown
  %2 = "onnx.lp_pool"(%x) {auto_pad = "VALID", ceil_mode = 0 : si64, kernel_shape = array<i64: 3, 3>, p = 2 : si64, strides = array<i64: 2, 2>} : (tensor<?x3x7x7xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// CHECK-LABEL: func.func @global_pool
// CHECK: "onnx.global_average_pool"{{.*}} -> tensor<?x16x1x1xf32>
// CHECK: "onnx.global_max_pool_v1"{{.*}} -> tensor<2x?x1xf32>
func.func @global_pool(%x: tensor<?x16x7x7xf32>, %y: tensor<2x?x9xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.global_average_pool"(%x) : (tensor<?x16x7x7xf32>) -> !onnx.unknown
  %1 = "onnx.global_max_pool_v1"(%y) : (tensor<2x?x9xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// ceil_mode with a window larger than the padded input (transformers'
// EfficientNet pooler): ceil((4 - 640) / 640) + 1 = 1, as onnxruntime runs it.
// CHECK-LABEL: func.func @ceil_mode_window_larger_than_input
// CHECK: "onnx.average_pool"{{.*}} -> tensor<1x8x1x1xf32>
func.func @ceil_mode_window_larger_than_input(%x: tensor<1x8x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.average_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 1 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 640, 640>, strides = array<i64: 640, 640>} : (tensor<1x8x4x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
