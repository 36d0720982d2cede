// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'dq' (DequantizeLinear): scale has 4 elements but input dim 1 (axis) is 3
func.func @f(%x: tensor<2x3xui8>, %s: tensor<4xf32>, %z: tensor<4xui8>) -> !onnx.unknown {
  %0 = "onnx.dequantize_linear_v23"(%x, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64} : (tensor<2x3xui8>, tensor<4xf32>, tensor<4xui8>) -> !onnx.unknown loc("dq")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'l' (SoftmaxCrossEntropyLoss): target has shape [5] but input has [3x4]: dim 0 differs (5 vs 3)
func.func @f(%x: tensor<3x4xf32>, %t: tensor<5xi64>) -> !onnx.unknown {
  %0 = "onnx.softmax_cross_entropy_loss"(%x, %t) {reduction = "none"} : (tensor<3x4xf32>, tensor<5xi64>) -> !onnx.unknown loc("l")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'att' (Attention): Q head size 8 differs from K head size 4
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x8xf32>) -> !onnx.unknown {
  %0 = "onnx.attention_v23"(%q, %k, %v) {is_causal = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, qk_matmul_output_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 0>, softcap = 0.000000e+00 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x8xf32>) -> !onnx.unknown loc("att")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'lstm' (LSTM): input 'W' has dim 1 = 16: expected 4 * hidden_size = 20
func.func @f(%x: tensor<7x3x6xf32>, %w: tensor<2x16x6xf32>, %r: tensor<2x20x5xf32>) -> !onnx.unknown {
  %0 = "onnx.lstm"(%x, %w, %r) {direction = "bidirectional", hidden_size = 5 : si64, input_forget = 0 : si64, layout = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0>} : (tensor<7x3x6xf32>, tensor<2x16x6xf32>, tensor<2x20x5xf32>) -> !onnx.unknown loc("lstm")
  return %0 : !onnx.unknown
}
