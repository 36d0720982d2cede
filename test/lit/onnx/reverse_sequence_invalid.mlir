// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'r' (ReverseSequence): batch_axis 0 and time_axis 0 must be 0 and 1 (in either order)
func.func @f(%x: tensor<4x2x3xf32>, %l: tensor<2xi64>) -> !onnx.unknown {
  %0 = "onnx.reverse_sequence"(%x, %l) {batch_axis = 0 : si64, time_axis = 0 : si64} : (tensor<4x2x3xf32>, tensor<2xi64>) -> !onnx.unknown loc("r")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'r' (ReverseSequence): sequence_lens has 3 lengths for a batch of 2
func.func @f(%x: tensor<4x2x3xf32>, %l: tensor<3xi64>) -> !onnx.unknown {
  %0 = "onnx.reverse_sequence"(%x, %l) {batch_axis = 1 : si64, time_axis = 0 : si64} : (tensor<4x2x3xf32>, tensor<3xi64>) -> !onnx.unknown loc("r")
  return %0 : !onnx.unknown
}
