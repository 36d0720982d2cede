// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 's0' (Split): split sizes sum to 6, but dim 1 is 7
func.func @f(%x: tensor<3x7xf32>) -> !onnx.unknown {
  %0:2 = "onnx.split_v11"(%x) {axis = 1 : si64, split = array<i64: 2, 4>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x7xf32>) -> (!onnx.unknown, !onnx.unknown) loc("s0")
  return %0#0 : !onnx.unknown
}

// -----
// CHECK: error: node 's1' (Split): axis 2 is out of range for rank 2 (expected [-2, 1])
func.func @f(%x: tensor<3x7xf32>) -> !onnx.unknown {
  %0:2 = "onnx.split_v11"(%x) {axis = 2 : si64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x7xf32>) -> (!onnx.unknown, !onnx.unknown) loc("s1")
  return %0#0 : !onnx.unknown
}

// -----
// CHECK: error: node 's2' (Split): dim 1 (7) is not divisible by the 2 outputs
func.func @f(%x: tensor<3x7xf32>) -> !onnx.unknown {
  %0:2 = "onnx.split_v11"(%x) {axis = 1 : si64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3x7xf32>) -> (!onnx.unknown, !onnx.unknown) loc("s2")
  return %0#0 : !onnx.unknown
}
