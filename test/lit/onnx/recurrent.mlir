// RUN: %opt %s --shape-inference | FileCheck %s

// LSTM with only Y_h: [num_directions, batch, hidden].
// CHECK-LABEL: func.func @lstm
// CHECK: "onnx.lstm"{{.*}} -> tensor<2x3x5xf32>
func.func @lstm(%x: tensor<7x3x6xf32>, %w: tensor<2x20x6xf32>, %r: tensor<2x20x5xf32>) -> !onnx.unknown {
  %0 = "onnx.lstm"(%x, %w, %r) {direction = "bidirectional", hidden_size = 5 : si64, input_forget = 0 : si64, layout = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0>} : (tensor<7x3x6xf32>, tensor<2x20x6xf32>, tensor<2x20x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
