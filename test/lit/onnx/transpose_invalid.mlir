// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 't0' (Transpose): perm [0, 0, 1] is not a permutation of [0, 3) (input rank 3)
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.transpose"(%x) {perm = array<i64: 0, 0, 1>} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("t0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 't1' (Transpose): perm [1, 0] is not a permutation of [0, 3) (input rank 3)
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("t1")
  return %0 : !onnx.unknown
}
