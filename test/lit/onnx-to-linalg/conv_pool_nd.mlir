// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-DAG: = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 + d5)>
// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>

// CHECK-LABEL: func.func @conv1d_lppool
// CHECK: tensor.expand_shape
// CHECK: arith.mulf
// CHECK: tensor.collapse_shape
// CHECK: math.absf
// CHECK: math.sqrt
// CHECK: arith.maximumf
// CHECK-NOT: onnx.
func.func @conv1d_lppool(%arg0: tensor<1x4x6xf32> {onnx.name = "x"}, %arg1: tensor<4x2x3xf32> {onnx.name = "w"}) -> (tensor<1x4x4xf32> {onnx.name = "y"}, tensor<1x4x5xf32> {onnx.name = "p"}, tensor<1x4x4xf32> {onnx.name = "m"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.conv"(%arg0, %arg1) {auto_pad = "NOTSET", group = 2 : si64} : (tensor<1x4x6xf32>, tensor<4x2x3xf32>) -> tensor<1x4x4xf32>
    %1 = "onnx.lp_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2>, p = 2 : si64} : (tensor<1x4x6xf32>) -> tensor<1x4x5xf32>
    %2 = "onnx.max_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 3>, storage_order = 0 : si64} : (tensor<1x4x6xf32>) -> tensor<1x4x4xf32>
    return %0, %1, %2 : tensor<1x4x4xf32>, tensor<1x4x5xf32>, tensor<1x4x4xf32>
  }

