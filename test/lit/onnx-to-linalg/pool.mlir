// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

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
// count_include_pad=0 with pads: the divisor per output position from its indices
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: arith.sitofp
// CHECK: arith.divf
func.func @avg_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "onnx.average_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// The spatial dims become one (a tensor.reshape, which elementwise fusion
// does not fold back into two reduction dims), reduced as a row of 20.
// CHECK-LABEL: func.func @global_avg
// CHECK: tensor.reshape %{{.*}} : (tensor<?x3x4x5xf32>, tensor<3xindex>) -> tensor<?x3x20xf32>
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.expand_shape {{.*}} into tensor<?x3x1x1xf32>
// CHECK: arith.constant 2.000000e+01 : f32
func.func @global_avg(%x: tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32> {
  %0 = "onnx.global_average_pool"(%x) : (tensor<?x3x4x5xf32>) -> tensor<?x3x1x1xf32>
  return %0 : tensor<?x3x1x1xf32>
}

// auto_pad SAME with dynamic spatial dims: pads computed at run time, the
// "padded input smaller than the kernel" condition checked in the compiled code
// CHECK-LABEL: func.func @max_pool_same_dynamic
// CHECK: arith.ceildivsi
// CHECK: scf.if
// CHECK: func.call @om_check_failed
// CHECK: tensor.pad %{{.*}} low[0, 0, %{{.*}}, %{{.*}}] high[0, 0, %{{.*}}, %{{.*}}]
// CHECK: linalg.pooling_nchw_max {{.*}} ins(%{{.*}} : tensor<?x2x?x?xf32>, tensor<3x3xf32>)
func.func @max_pool_same_dynamic(%x: tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32> {
  %0 = "onnx.max_pool_v12"(%x) {auto_pad = "SAME_UPPER", ceil_mode = 0 : si64, kernel_shape = array<i64: 3, 3>, storage_order = 0 : si64, strides = array<i64: 2, 2>} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  return %0 : tensor<?x2x?x?xf32>
}

// -----

// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3)>

// 1-D LpPool and MaxPool (the 2-D pool of the [N, C, 1, L] view, a 1x3
// window, so -O3 runs it on the pool kernel).
// CHECK-LABEL: func.func @lppool_maxpool_1d
// CHECK: math.absf
// CHECK: math.sqrt
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 1, 6]
// CHECK: linalg.pooling_nchw_max {{.*}} ins({{.*}} : tensor<1x4x1x6xf32>, tensor<1x3xf32>) outs({{.*}} : tensor<1x4x1x4xf32>)
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x4xf32>
// CHECK-NOT: onnx.
func.func @lppool_maxpool_1d(%arg0: tensor<1x4x6xf32> {onnx.name = "x"}) -> (tensor<1x4x5xf32> {onnx.name = "p"}, tensor<1x4x4xf32> {onnx.name = "m"}) attributes {onnx.graph_name = "g"} {
    %1 = "onnx.lp_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2>, p = 2 : si64} : (tensor<1x4x6xf32>) -> tensor<1x4x5xf32>
    %2 = "onnx.max_pool"(%arg0) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 3>, storage_order = 0 : si64} : (tensor<1x4x6xf32>) -> tensor<1x4x4xf32>
    return %1, %2 : tensor<1x4x5xf32>, tensor<1x4x4xf32>
  }

// -----

// MaxUnpool: the indices' range checked first (one pass computing their
// unsigned maximum, below N*C*4*4 = 32), then zeros of the output_shape
// result with each X element inserted at its flat index into the inferred
// [1, 2, 4, 4] (split by 4, 4, 2), in an scf.for nest carrying the result.
// CHECK-LABEL: func.func @max_unpool_output_shape
// CHECK: scf.for
// CHECK: arith.maxui
// CHECK: arith.constant 31 : i64
// CHECK: arith.cmpi ult
// CHECK: func.call @om_check_failed
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x5x5xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[Z]]) -> (tensor<1x2x5x5xf32>)
// CHECK: %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: arith.remui %[[I]], %[[C4:.*]] : index
// CHECK: %[[Q:.*]] = arith.divui %[[I]], %[[C4]] : index
// CHECK: arith.remui %[[Q]]
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<1x2x5x5xf32>
// CHECK-NOT: onnx.
func.func @max_unpool_output_shape(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x5x5xf32> {
  %s = "onnx.constant"() {value = dense<[1, 2, 5, 5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.max_unpool"(%x, %i, %s) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}

// -----

// Dynamic batch and height: I's dims checked against X's, the inferred
// height (H - 1) * 2 + 2 - 1 computed and checked >= 0 at run time, the
// result allocated with the run-time dims.
// CHECK-LABEL: func.func @max_unpool_dynamic
// CHECK: arith.cmpi eq
// CHECK: func.call @om_check_failed
// CHECK: arith.cmpi eq
// CHECK: func.call @om_check_failed
// CHECK: %[[H:.*]] = tensor.dim %arg0, %c2{{.*}} : tensor<?x2x?x3xf32>
// CHECK: %[[H1:.*]] = arith.subi %[[H]]
// CHECK: %[[H2:.*]] = arith.muli %[[H1]]
// CHECK: %[[H3:.*]] = arith.addi %[[H2]]
// CHECK: %[[OH:.*]] = arith.subi %[[H3]]
// CHECK: arith.cmpi sge, %[[OH]]
// CHECK: func.call @om_check_failed
// CHECK: tensor.empty(%{{.*}}, %[[OH]]) : tensor<?x2x?x5xf32>
// CHECK: scf.for
// CHECK: tensor.insert {{.*}} : tensor<?x2x?x5xf32>
func.func @max_unpool_dynamic(%x: tensor<?x2x?x3xf32>, %i: tensor<?x2x?x3xi64>) -> tensor<?x2x?x5xf32> {
  %0 = "onnx.max_unpool_v11"(%x, %i) {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>} : (tensor<?x2x?x3xf32>, tensor<?x2x?x3xi64>) -> tensor<?x2x?x5xf32>
  return %0 : tensor<?x2x?x5xf32>
}
