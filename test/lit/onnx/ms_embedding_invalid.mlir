// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'seg_only' (EmbedLayerNormalization): input 'segment_ids' without 'segment_embedding' is not supported: give both or neither
func.func @f(%ids: tensor<2x4xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %ga: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %ids, %w, %p, %ga, %ga) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x4xi32>, tensor<2x4xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>) -> !onnx.unknown loc("seg_only")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'f16' (EmbedLayerNormalization): input 'word_embedding' has element type f16: expected f32 (onnxruntime's CPU kernel is f32 only)
func.func @f(%ids: tensor<2x4xi32>, %w: tensor<11x8xf16>, %p: tensor<9x8xf16>, %ga: tensor<8xf16>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %ga) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x4xi32>, tensor<11x8xf16>, tensor<9x8xf16>, tensor<8xf16>, tensor<8xf16>) -> !onnx.unknown loc("f16")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gamma_len' (EmbedLayerNormalization): input 'gamma' has 4 elements: expected hidden size 8 (word_embedding's dim 1)
func.func @f(%ids: tensor<?x?xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %ga: tensor<4xf32>, %be: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %be) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x?xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<4xf32>, tensor<8xf32>) -> !onnx.unknown loc("gamma_len")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'pid_batch' (EmbedLayerNormalization): input 'position_ids' dim 0 is 3: expected 1 or input_ids' batch size 2
func.func @f(%ids: tensor<2x4xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %ga: tensor<8xf32>, %pid: tensor<3x4xi32>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %ga, %pid) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 0, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x4xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<3x4xi32>) -> !onnx.unknown loc("pid_batch")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mask_shape' (EmbedLayerNormalization): input 'mask' dim 1 is 5: expected input_ids' dim 1 (4)
func.func @f(%ids: tensor<2x4xi32>, %w: tensor<11x8xf32>, %p: tensor<9x8xf32>, %ga: tensor<8xf32>, %m: tensor<2x5xi32>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %ga, %m) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x4xi32>, tensor<11x8xf32>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x5xi32>) -> !onnx.unknown loc("mask_shape")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'word_rank' (EmbedLayerNormalization): input 'word_embedding' has shape [11x2x4]: expected rank 2
func.func @f(%ids: tensor<2x4xi32>, %w: tensor<11x2x4xf32>, %p: tensor<9x8xf32>, %ga: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.embed_layer_normalization"(%ids, %w, %p, %ga, %ga) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 0, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x4xi32>, tensor<11x2x4xf32>, tensor<9x8xf32>, tensor<8xf32>, tensor<8xf32>) -> !onnx.unknown loc("word_rank")
  return %0 : !onnx.unknown
}
