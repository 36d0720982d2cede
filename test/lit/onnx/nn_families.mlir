// RUN: %opt %s --shape-inference | FileCheck %s

// Quantization: y has x's shape; QuantizeLinear takes the zero point's type,
// DequantizeLinear (v19+) the scale's.
// CHECK-LABEL: func.func @quant
// CHECK: "onnx.quantize_linear_v23"{{.*}} -> tensor<?x4xui8>
// CHECK: "onnx.dequantize_linear_v23"{{.*}} -> tensor<?x4xf32>
func.func @quant(%x: tensor<?x4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.quantize_linear_v23"(%x, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64, precision = 0 : si64, saturate = 1 : si64} : (tensor<?x4xf32>, tensor<f32>, tensor<ui8>) -> !onnx.unknown
  %1 = "onnx.dequantize_linear_v23"(%0, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64} : (!onnx.unknown, tensor<f32>, tensor<ui8>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// Loss with reduction 'none' has the target's shape.
// CHECK-LABEL: func.func @loss
// CHECK: "onnx.softmax_cross_entropy_loss"{{.*}} -> tensor<?xf32>
func.func @loss(%x: tensor<?x4xf32>, %t: tensor<?xi64>) -> !onnx.unknown {
  %0 = "onnx.softmax_cross_entropy_loss"(%x, %t) {reduction = "none"} : (tensor<?x4xf32>, tensor<?xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// Attention with only Y and qk_matmul_output: results follow their ONNX slots.
// CHECK-LABEL: func.func @attention
// CHECK: "onnx.attention_v23"{{.*}} -> (tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>)
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0:2 = "onnx.attention_v23"(%q, %k, %v) {is_causal = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, qk_matmul_output_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 1>, softcap = 0.000000e+00 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}

// LSTM with only Y_h: [num_directions, batch, hidden].
// CHECK-LABEL: func.func @lstm
// CHECK: "onnx.lstm"{{.*}} -> tensor<2x3x5xf32>
func.func @lstm(%x: tensor<7x3x6xf32>, %w: tensor<2x20x6xf32>, %r: tensor<2x20x5xf32>) -> !onnx.unknown {
  %0 = "onnx.lstm"(%x, %w, %r) {direction = "bidirectional", hidden_size = 5 : si64, input_forget = 0 : si64, layout = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 0, 1, 0>} : (tensor<7x3x6xf32>, tensor<2x20x6xf32>, tensor<2x20x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
