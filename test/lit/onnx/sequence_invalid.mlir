// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'ins' (SequenceInsert): inserts a tensor of i64 into a sequence of f32 tensors
func.func @f(%s: !onnx.seq<tensor<?xf32>>, %x: tensor<3xi64>) -> !onnx.seq<tensor<*xf32>> {
  %0 = "onnx.sequence_insert"(%s, %x) : (!onnx.seq<tensor<?xf32>>, tensor<3xi64>) -> !onnx.seq<tensor<*xf32>> loc("ins")
  return %0 : !onnx.seq<tensor<*xf32>>
}

// -----
// CHECK: error: node 'at' (SequenceAt): position must be a scalar, got shape [2]
func.func @f(%s: !onnx.seq<tensor<?xf32>>, %p: tensor<2xi64>) -> !onnx.unknown {
  %0 = "onnx.sequence_at"(%s, %p) : (!onnx.seq<tensor<?xf32>>, tensor<2xi64>) -> !onnx.unknown loc("at")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'split' (SplitToSequence): axis 2 is out of range for rank 2 (expected [-2, 1])
func.func @f(%x: tensor<4x3xf32>) -> !onnx.seq<tensor<*xf32>> {
  %0 = "onnx.split_to_sequence"(%x) {axis = 2 : si64, keepdims = 1 : si64} : (tensor<4x3xf32>) -> !onnx.seq<tensor<*xf32>> loc("split")
  return %0 : !onnx.seq<tensor<*xf32>>
}

// -----
// CHECK: error: node 'c' (SequenceConstruct): input 'inputs' has type tensor(int64) but 'inputs' has tensor(float)
func.func @f(%x: tensor<3xf32>, %y: tensor<3xi64>) -> !onnx.seq<tensor<*xf32>> {
  %0 = "onnx.sequence_construct"(%x, %y) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<3xf32>, tensor<3xi64>) -> !onnx.seq<tensor<*xf32>> loc("c")
  return %0 : !onnx.seq<tensor<*xf32>>
}
