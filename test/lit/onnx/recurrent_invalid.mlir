// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'lstm' (LSTM): input 'W' has dim 1 = 16: expected 4 * hidden_size = 20
func.func @f(%x: tensor<7x3x6xf32>, %w: tensor<2x16x6xf32>, %r: tensor<2x20x5xf32>) -> !onnx.unknown {
  %0 = "onnx.lstm"(%x, %w, %r) {direction = "bidirectional", hidden_size = 5 : si64, input_forget = 0 : si64, layout = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0>} : (tensor<7x3x6xf32>, tensor<2x16x6xf32>, tensor<2x20x5xf32>) -> !onnx.unknown loc("lstm")
  return %0 : !onnx.unknown
}
