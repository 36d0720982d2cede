// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @bn
// CHECK: linalg.generic {indexing_maps = [#map, #map1, #map1, #map1, #map1, #map]
// CHECK: math.rsqrt
func.func @bn(%x: tensor<?x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<?x3x4x4xf32> {
  %0 = "onnx.batch_normalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, training_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  return %0 : tensor<?x3x4x4xf32>
}

// -----

// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d3, d2)>

// CHECK-LABEL: func.func @instance_group
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: math.rsqrt
// CHECK: tensor.expand_shape
// CHECK: tensor.collapse_shape
// CHECK-NOT: onnx.
func.func @instance_group(%arg0: tensor<1x3x4xf32> {onnx.name = "x"}, %arg1: tensor<3xf32> {onnx.name = "s"}, %arg2: tensor<3xf32> {onnx.name = "b"}) -> (tensor<1x3x4xf32> {onnx.name = "y"}, tensor<1x3x4xf32> {onnx.name = "g"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.instance_normalization_v6"(%arg0, %arg1, %arg2) {epsilon = 9.99999974E-6 : f32} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4xf32>
    %1 = "onnx.group_normalization"(%arg0, %arg1, %arg2) {epsilon = 9.99999974E-6 : f32, num_groups = 3 : si64, stash_type = 1 : si64} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4xf32>
    return %0, %1 : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  }

// CHECK-LABEL: func.func @lrn_rms
// CHECK: tensor.pad
// CHECK: math.powf
// CHECK: math.rsqrt
// CHECK-NOT: onnx.
func.func @lrn_rms(%arg0: tensor<1x3x4xf32> {onnx.name = "x"}, %arg1: tensor<4xf32> {onnx.name = "s"}) -> (tensor<1x3x4xf32> {onnx.name = "y"}, tensor<1x3x4xf32> {onnx.name = "r"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.lrn"(%arg0) {alpha = 9.99999974E-5 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 3 : si64} : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
    %1 = "onnx.rms_normalization"(%arg0, %arg1) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : si64} : (tensor<1x3x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32>
    return %0, %1 : tensor<1x3x4xf32>, tensor<1x3x4xf32>
  }


// GroupNormalization with dynamic channels: x viewed as (N, G, C/G, ...) and
// the v21 scale/bias as (G, C/G) with one dynamic size per expanded group;
// C % G == 0 is checked in the compiled code
// CHECK-LABEL: func.func @group_norm_dynamic_channels
// CHECK: arith.remsi
// CHECK: func.call @om_check_failed
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3]] output_shape [%{{.*}}, 2, %{{.*}}, %{{.*}}]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [2, %{{.*}}] : tensor<?xf32> into tensor<2x?xf32>
func.func @group_norm_dynamic_channels(%x: tensor<?x?x?xf32>, %s: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %0 = "onnx.group_normalization"(%x, %s, %b) {epsilon = 9.99999974E-6 : f32, num_groups = 2 : si64, stash_type = 1 : si64} : (tensor<?x?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// LpNormalization p = 2 over dim 1 (dynamic): sum of squares, then x / sqrt (0 for a zero norm)
// CHECK-LABEL: func.func @lp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.sqrt
// CHECK: arith.cmpf oeq
// CHECK: arith.divf
// CHECK: arith.select
// CHECK-NOT: onnx.
func.func @lp(%arg0: tensor<2x?xf32> {onnx.name = "x"}) -> (tensor<2x?xf32> {onnx.name = "y"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.lp_normalization"(%arg0) {axis = 1 : si64, p = 2 : si64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
    return %0 : tensor<2x?xf32>
  }

// -----

// LayerNormalization over the last dim: sum -> mean, squared deviations ->
// rsqrt(var + eps), then one generic; Mean / InvStdDev keep a unit dim.
// CHECK-LABEL: func.func @layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x3x8xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}}, %arg1, %arg2 : tensor<?x3x8xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: tensor.expand_shape {{.*}} : tensor<?x3xf32> into tensor<?x3x1xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<?x3xf32> into tensor<?x3x1xf32>
func.func @layer_norm(%x: tensor<?x3x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>) {
  %0:3 = "onnx.layer_normalization"(%x, %s, %b) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, resultSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : si64} : (tensor<?x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>
}

// -----
// training_mode=1: the batch's mean and variance over dims 0 and 2 (two
// reductions, moments), Y normalized by them, running_mean / running_var =
// input * momentum + batch statistic * (1 - momentum).
// CHECK-LABEL: func.func @bn_training
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]} ins(%arg0 : tensor<?x3x?xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "reduction"]} ins(%arg0, %[[MEAN]] :
// CHECK: %[[VAR:.*]] = linalg.generic
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2, %[[MEAN]], %[[VAR]] :
// CHECK: math.rsqrt
// CHECK: %[[RM:.*]] = linalg.generic {{.*}} ins(%arg3, %[[MEAN]] :
// CHECK: arith.mulf %{{.*}}, %cst
// CHECK: %[[RV:.*]] = linalg.generic {{.*}} ins(%arg4, %[[VAR]] :
// CHECK: return %[[Y]], %[[RM]], %[[RV]]
func.func @bn_training(%x: tensor<?x3x?xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0, %1, %2 = "onnx.batch_normalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.8 : f32, training_mode = 1 : si64, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0, %1, %2 : tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>
}
