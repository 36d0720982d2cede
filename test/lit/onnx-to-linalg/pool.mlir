// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @max_pool
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
func.func @max_pool(%x: tensor<1x8x24x24xf32>) -> tensor<1x8x12x12xf32> {
  %0 = "onnx.max_pool_v12"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<1x8x24x24xf32>) -> tensor<1x8x12x12xf32>
  return %0 : tensor<1x8x12x12xf32>
}

// CHECK-LABEL: func.func @avg_pool
// CHECK: tensor.pad
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "onnx.average_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @global_avg
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: arith.constant 2.000000e+01 : f32
func.func @global_avg(%x: tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32> {
  %0 = "onnx.global_average_pool"(%x) : (tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32>
  return %0 : tensor<?x3x1x1xf32>
}
