// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'diag' (Einsum): label 'i' repeats in input 0 with sizes 2 and 3 (equation 'ii->i')
func.func @f(%a: tensor<2x3xf32>) -> !onnx.unknown {
  %0 = "onnx.einsum_v12"(%a) {equation = "ii->i", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>) -> !onnx.unknown loc("diag")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ell' (Einsum): the '...' dims do not broadcast: 2 and 3 (equation '...i,...i')
func.func @f(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "...i,...i", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x4xf32>, tensor<3x4xf32>) -> !onnx.unknown loc("ell")
  return %0 : !onnx.unknown
}
