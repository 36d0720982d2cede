// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// EmbedLayerNormalization with segment ids and a mask, every output, dynamic
// batch and sequence: range checks of the input and segment ids (one loop
// each, as Gather's) and of S <= P (no position_ids); one generic reading the
// ids and extracting the word / position (sequence index) / segment rows;
// the mean and variance over H (the normalization helper); (s - mean) *
// rsqrt(var + eps) * gamma + beta; mask_index counts the mask's ones
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[H:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[M:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @eln
// CHECK: scf.for
// CHECK: tensor.extract %arg0
// CHECK: func.call @om_check_failed
// CHECK: scf.for
// CHECK: tensor.extract %arg1
// CHECK: func.call @om_check_failed
// CHECK: arith.cmpi sle, %{{.*}}, %c9
// CHECK: func.call @om_check_failed
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID3]]]{{.*}} ins(%arg0, %arg1 :
// CHECK: tensor.extract %arg2
// CHECK: tensor.extract %arg3[%{{.*}}, %{{.*}}] : tensor<9x8xf32>
// CHECK: tensor.extract %arg4
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] :
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]], %{{.*}} :
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID2]], #[[ID2]], #[[H]], #[[H]], #[[ID3]]]{{.*}} ins(%[[S]], {{.*}}, %arg5, %arg6 :
// CHECK: math.rsqrt
// CHECK: %[[MI:.*]] = linalg.generic {indexing_maps = [#[[M]], #[[B]]], iterator_types = ["parallel", "reduction"]} ins(%arg7 :
// CHECK: arith.cmpi eq, %in, %c1_i32
// CHECK: return %[[Y]], %[[MI]], %[[S]]
func.func @eln(%ids: tensor<?x?xi32>, %seg: tensor<?x?xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %g: tensor<3x8xf32>, %ga: tensor<8xf32>, %be: tensor<8xf32>, %m: tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?xi32>, tensor<?x?x8xf32>) {
  %0:3 = "com_microsoft.embed_layer_normalization"(%ids, %seg, %w, %p, %g, %ga, %be, %m) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 1, 1>} : (tensor<?x?xi32>, tensor<?x?xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x?xi32>) -> (tensor<?x?x8xf32>, tensor<?xi32>, tensor<?x?x8xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x?x8xf32>, tensor<?xi32>, tensor<?x?x8xf32>
}

// -----

// GPT-2's form: no segment inputs, position_ids [1, S] read at row 0 for
// every batch (range-checked), output only; no mask_index generic
// CHECK-DAG: #[[P1:.*]] = affine_map<(d0, d1, d2) -> (0, d1)>
// CHECK-LABEL: func.func @eln_gpt2
// CHECK: tensor.extract %arg5
// CHECK: func.call @om_check_failed
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[P1]], #{{.*}}]{{.*}} ins(%arg0, %arg5 :
// CHECK-NOT: tensor.extract %arg5
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] :
// CHECK: math.rsqrt
// CHECK-NOT: arith.cmpi eq
// CHECK: return
func.func @eln_gpt2(%ids: tensor<?x?xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %ga: tensor<8xf32>, %be: tensor<8xf32>, %pid: tensor<1x?xi32>) -> tensor<?x?x8xf32> {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %be, %pid) {epsilon = 9.99999974E-6 : f32, mask_index_type = 0 : si64, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 0, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x?xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1x?xi32>) -> tensor<?x?x8xf32>
  return %0 : tensor<?x?x8xf32>
}
