// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>

// The grouped 1-D conv is the 2-D conv of the [N, C, 1, L] view (so -O3
// runs it on the 2-D kernels), its result viewed back.
// CHECK-LABEL: func.func @conv1d_lppool
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 1, 6]
// CHECK: tensor.expand_shape %arg1 {{\[}}[0], [1], [2, 3]] output_shape [4, 2, 1, 3]
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} {{.*}} -> tensor<1x2x2x1x4xf32>
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x1x4xf32>
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x4xf32>
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

