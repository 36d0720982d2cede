// RUN: %opt %s --lower-to-linalg | FileCheck %s

// One generic: output loops parallel, the summed label a reduction; the
// diagonal reads one loop twice.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[D:.*]] = affine_map<(d0) -> (d0, d0)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "ij,jk->ik", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// CHECK-LABEL: func.func @diagonal
// CHECK: linalg.generic {indexing_maps = [#[[D]], {{.*}}], iterator_types = ["parallel"]}
func.func @diagonal(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %0 = "onnx.einsum_v12"(%a) {equation = "ii->i", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// f16 accumulates in f32, rounded once.
// CHECK-LABEL: func.func @half
// CHECK: arith.extf
// CHECK: arith.truncf
func.func @half(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<f16> {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "i,i", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<4xf16>, tensor<4xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}
