// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// 3-D input [B, S, 2 x 8], an offset position (token s at offset + s),
// partial rotation (rotary_embedding_dim 4 of head_size 8), halves: the
// offset is checked against the caches' rows, the caches' rows gathered per
// token ([B, S, 2]), each head's first 4 elements viewed as [2, 2] (half k,
// element i; the partner is half 1 - k), rotated, and put back into the input
// (the last 4 elements of each head are copied)
// CHECK-DAG: #[[ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[PARTNER:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, -d3 + 1, d4)>
// CHECK-DAG: #[[TABLE:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-LABEL: func.func @rot_partial
// CHECK: %[[X4:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [%{{.*}}, %{{.*}}, 2, 8]
// CHECK: tensor.extract %arg1
// CHECK: func.call @om_check_failed
// CHECK: %[[G:.*]]:2 = linalg.generic
// CHECK: linalg.index 1
// CHECK: tensor.extract %arg2
// CHECK: tensor.extract %arg3
// CHECK: %[[XR:.*]] = tensor.extract_slice %[[X4]][0, 0, 0, 0] [%{{.*}}, %{{.*}}, 2, 4]
// CHECK: %[[X5:.*]] = tensor.expand_shape %[[XR]] {{\[}}[0], [1], [2], [3, 4]] output_shape [%{{.*}}, %{{.*}}, 2, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[ID5]], #[[PARTNER]], #[[TABLE]], #[[TABLE]], #[[ID5]]]{{.*}} ins(%[[X5]], %[[X5]], %[[G]]#0, %[[G]]#1 :
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: arith.select
// CHECK: tensor.insert_slice %{{.*}} into %[[X4]][0, 0, 0, 0] [%{{.*}}, %{{.*}}, 2, 4]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<?x?x2x8xf32> into tensor<?x?x16xf32>
func.func @rot_partial(%x: tensor<?x?x16xf32>, %p: tensor<1xi64>, %c: tensor<?x2xf32>, %s: tensor<?x2xf32>) -> tensor<?x?x16xf32> {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %s) {num_heads = 2 : si64, rotary_embedding_dim = 4 : si64} : (tensor<?x?x16xf32>, tensor<1xi64>, tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x?x16xf32>
  return %0 : tensor<?x?x16xf32>
}

// -----

// 4-D f16 input [B, 2, S, 8], position_ids [B, S], interleaved pairs: the
// ids' min and max (one reduction) are checked against the caches' rows;
// each head viewed as [4, 2] (pair i, element k; the partner is 1 - k),
// computed in f32 and rounded once; no slice (all of each head rotates)
// CHECK-DAG: #[[PAIR:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, -d4 + 1)>
// CHECK-DAG: #[[TAB4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @rot4
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%arg1 : tensor<?x?xi64>)
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: func.call @om_check_failed
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<?x?xi64>) outs(%{{.*}}, %{{.*}} : tensor<?x?x4xf16>, tensor<?x?x4xf16>)
// CHECK: %[[X5:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] output_shape [%{{.*}}, 2, %{{.*}}, 4, 2]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[PAIR]], #[[TAB4]], #[[TAB4]], #{{.*}}]{{.*}} ins(%[[X5]], %[[X5]],
// CHECK: arith.extf
// CHECK: linalg.index 4
// CHECK: arith.truncf
// CHECK-NOT: tensor.insert_slice
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2], [3, 4]] : tensor<?x2x?x4x2xf16> into tensor<?x2x?x8xf16>
func.func @rot4(%x: tensor<?x2x?x8xf16>, %p: tensor<?x?xi64>, %c: tensor<12x4xf16>, %s: tensor<12x4xf16>) -> tensor<?x2x?x8xf16> {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %s) {interleaved = 1 : si64} : (tensor<?x2x?x8xf16>, tensor<?x?xi64>, tensor<12x4xf16>, tensor<12x4xf16>) -> tensor<?x2x?x8xf16>
  return %0 : tensor<?x2x?x8xf16>
}
