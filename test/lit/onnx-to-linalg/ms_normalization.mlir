// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// SkipLayerNormalization, skip [S, H] broadcast over the batch, no beta, a
// bias; outputs output, inv_std_var, input_skip_bias_sum: s = x + skip + bias
// (one generic), its mean and variance over H (two reductions), rsqrt, then
// (s - mean) * inv * gamma; inv_std_var gets its unit last dim
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[SK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[H:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @skip_ln
// CHECK: func.call @om_check_failed
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SK]], #[[H]], #[[ID]]]{{.*}} ins(%arg0, %arg1, %arg3 :
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]], %{{.*}} :
// CHECK: arith.subf
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[H]], #[[ID]]]{{.*}} ins(%[[S]], %{{[0-9]+}}, %[[INV:[0-9]+]], %arg2 :
// CHECK: arith.subf
// CHECK: %[[IV:.*]] = tensor.expand_shape %[[INV]] {{\[}}[0], [1, 2]]
// CHECK: return %[[Y]], %[[IV]], %[[S]]
func.func @skip_ln(%x: tensor<?x?x8xf32>, %sk: tensor<?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf32>) {
  %0:3 = "com_microsoft.skip_layer_normalization"(%x, %sk, %g, %b) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, resultSegmentSizes = array<i32: 1, 0, 1, 1>} : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x?x8xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf32>
}

// -----

// SkipSimplifiedLayerNormalization in f16, skip [1, S, H]: the sum and the
// statistics in f32 (the mean of squares, no centering), the output rounded
// once; mean is zeros; input_skip_bias_sum is the f32 sum rounded to f16
// CHECK-DAG: #[[B1:.*]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// CHECK-LABEL: func.func @skip_simplified_f16
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[B1]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<?x?x8xf32>)
// CHECK: arith.extf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] :
// CHECK: arith.mulf %in, %in
// CHECK-NOT: arith.subf
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[S]], %{{.*}}, %arg2 : {{.*}} outs(%{{.*}} : tensor<?x?x8xf16>)
// CHECK: arith.truncf
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK: %[[M:.*]] = tensor.expand_shape %[[Z]]
// CHECK: %[[IV:.*]] = tensor.expand_shape
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<?x?x8xf32>) outs(%{{.*}} : tensor<?x?x8xf16>)
// CHECK: arith.truncf
// CHECK: return %[[Y]], %[[M]], %[[IV]], %[[SUM]]
func.func @skip_simplified_f16(%x: tensor<?x?x8xf16>, %sk: tensor<1x?x8xf16>, %g: tensor<8xf16>) -> (tensor<?x?x8xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf16>) {
  %0:4 = "com_microsoft.skip_simplified_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1>} : (tensor<?x?x8xf16>, tensor<1x?x8xf16>, tensor<8xf16>) -> (tensor<?x?x8xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf16>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<?x?x8xf16>, tensor<?x?x1xf32>, tensor<?x?x1xf32>, tensor<?x?x8xf16>
}

// -----

// A 3-D skip whose batch is dynamic: 1 or input's batch (a run-time check),
// broadcast in a run-time branch when it is 1
// CHECK-LABEL: func.func @skip_dynamic_batch
// CHECK: func.call @om_check_failed
// CHECK: scf.if
// CHECK: tensor.extract %arg1
// CHECK: linalg.generic
// CHECK: math.rsqrt
func.func @skip_dynamic_batch(%x: tensor<?x4x8xf32>, %sk: tensor<?x4x8xf32>, %g: tensor<8xf32>) -> tensor<?x4x8xf32> {
  %0 = "com_microsoft.skip_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<?x4x8xf32>, tensor<?x4x8xf32>, tensor<8xf32>) -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}

// -----

// SimplifiedLayerNormalization over dims 1..2 with a broadcast scale [1, 4]:
// the mean of squares (one reduction), rsqrt, x * inv * scale; inv_std_var
// is [N, 1, 1]
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @simplified
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%arg0 :
// CHECK: arith.mulf %in, %in
// CHECK: math.rsqrt
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[N]], #[[SC]], #{{.*}}]{{.*}} ins(%arg0, %[[INV:[0-9]+]], %arg1 :
// CHECK: %[[IV:.*]] = tensor.expand_shape %[[INV]] {{\[}}[0, 1, 2]] output_shape [%{{.*}}, 1, 1]
// CHECK: return %[[Y]], %[[IV]]
func.func @simplified(%x: tensor<?x3x4xf32>, %s: tensor<1x4xf32>) -> (tensor<?x3x4xf32>, tensor<?x1x1xf32>) {
  %0:2 = "onnx.simplified_layer_normalization"(%x, %s) {axis = 1 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : si64} : (tensor<?x3x4xf32>, tensor<1x4xf32>) -> (tensor<?x3x4xf32>, tensor<?x1x1xf32>)
  return %0#0, %0#1 : tensor<?x3x4xf32>, tensor<?x1x1xf32>
}
