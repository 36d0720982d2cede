// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// W in ONNX LSTM's layout [D, 4H, I] instead of DynamicQuantizeLSTM's [D, I, 4H]
// CHECK: error: node 'dq_w' (DynamicQuantizeLSTM): input 'W' has dim 1 = 12: expected input size (X dim 2) = 5 (W is [num_directions, input_size, 4 * hidden_size], R [num_directions, hidden_size, 4 * hidden_size])
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<1x12x5xi8>, %r: tensor<1x3x12xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %z, %s, %z) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<1x12x5xi8>, tensor<1x3x12xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> !onnx.unknown loc("dq_w")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dq_r' (DynamicQuantizeLSTM): input 'R' has dim 0 = 1: expected num_directions = 2
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<2x5x12xi8>, %r: tensor<1x3x12xi8>, %s: tensor<2xf32>, %z: tensor<2xi8>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %z, %s, %z) {direction = "bidirectional", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<2x5x12xi8>, tensor<1x3x12xi8>, tensor<2xf32>, tensor<2xi8>, tensor<2xf32>, tensor<2xi8>) -> !onnx.unknown loc("dq_r")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dq_s' (DynamicQuantizeLSTM): input 'R_scale' has dim 1 = 3: expected 4 * hidden_size = 12 ([num_directions] per direction or [num_directions, 4 * hidden_size] per column)
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<1x5x12xi8>, %r: tensor<1x3x12xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>, %rs: tensor<1x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %z, %rs, %z) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<1x5x12xi8>, tensor<1x3x12xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1x3xf32>, tensor<1xi8>) -> !onnx.unknown loc("dq_s")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dq_zr' (DynamicQuantizeLSTM): input 'W_zero_point' has shape [1x1x12]: expected [num_directions] (per direction) or [num_directions, 4 * hidden_size] (per column)
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<1x5x12xi8>, %r: tensor<1x3x12xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>, %wz: tensor<1x1x12xi8>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %wz, %s, %z) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<1x5x12xi8>, tensor<1x3x12xi8>, tensor<1xf32>, tensor<1x1x12xi8>, tensor<1xf32>, tensor<1xi8>) -> !onnx.unknown loc("dq_zr")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dq_b' (DynamicQuantizeLSTM): input 'B' has dim 1 = 12: expected 8 * hidden_size = 24
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<1x5x12xi8>, %r: tensor<1x3x12xi8>, %b: tensor<1x12xf32>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %b, %s, %z, %s, %z) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<1x5x12xi8>, tensor<1x3x12xi8>, tensor<1x12xf32>, tensor<1xf32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> !onnx.unknown loc("dq_b")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dq_hs' (DynamicQuantizeLSTM): attribute 'hidden_size' = 0: expected >= 1
func.func @f(%x: tensor<4x2x5xf32>, %w: tensor<1x5x12xi8>, %r: tensor<1x3x12xi8>, %s: tensor<1xf32>, %z: tensor<1xi8>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %z, %s, %z) {direction = "forward", hidden_size = 0 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<4x2x5xf32>, tensor<1x5x12xi8>, tensor<1x3x12xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> !onnx.unknown loc("dq_hs")
  return %0 : !onnx.unknown
}
