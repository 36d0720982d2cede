// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'rot_packed' (RotaryEmbedding): is_packed_batching=1 (ragged batches) is not supported
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<1xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) {is_packed_batching = 1 : si64} : (tensor<2x4x16xf32>, tensor<1xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_packed")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_heads' (RotaryEmbedding): attribute 'rotary_embedding_dim' needs 'num_heads'
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<1xi64>, %c: tensor<8x2xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) {rotary_embedding_dim = 4 : si64} : (tensor<2x4x16xf32>, tensor<1xi64>, tensor<8x2xf32>, tensor<8x2xf32>) -> !onnx.unknown loc("rot_heads")
  return %0 : !onnx.unknown
}

// -----
// a cache of head_size / 2 with a partial rotation: onnxruntime accepts it
// but reads its rows with the wrong stride
// CHECK: error: node 'rot_width' (RotaryEmbedding): cos_cache dim 1 is 4: expected rotary_embedding_dim / 2 = 2
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<1xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) {num_heads = 2 : si64, rotary_embedding_dim = 4 : si64} : (tensor<2x4x16xf32>, tensor<1xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_width")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_dim' (RotaryEmbedding): attribute 'rotary_embedding_dim' = 10: expected <= head_size 8
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<1xi64>, %c: tensor<8x5xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) {num_heads = 2 : si64, rotary_embedding_dim = 10 : si64} : (tensor<2x4x16xf32>, tensor<1xi64>, tensor<8x5xf32>, tensor<8x5xf32>) -> !onnx.unknown loc("rot_dim")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_hidden' (RotaryEmbedding): the hidden size 12 is not a multiple of head_size 8 (2 x cos_cache dim 1)
func.func @f(%x: tensor<2x4x12xf32>, %p: tensor<1xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) : (tensor<2x4x12xf32>, tensor<1xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_hidden")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_pos' (RotaryEmbedding): position_ids dim 1 is 5: expected the sequence length 4
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<2x5xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) : (tensor<2x4x16xf32>, tensor<2x5xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_pos")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_off' (RotaryEmbedding): position_ids has 3 elements: expected 1 (an offset) or [batch, sequence]
func.func @f(%x: tensor<2x4x16xf32>, %p: tensor<3xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) : (tensor<2x4x16xf32>, tensor<3xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_off")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_n4' (RotaryEmbedding): input dim 1 (heads) is 3: expected num_heads = 2
func.func @f(%x: tensor<2x3x4x8xf32>, %p: tensor<1xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) {num_heads = 2 : si64} : (tensor<2x3x4x8xf32>, tensor<1xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_n4")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_seq' (RotaryEmbedding): the sequence length 9 exceeds the caches' max_seq 8 (onnxruntime does not extend the caches)
func.func @f(%x: tensor<2x9x16xf32>, %p: tensor<2x9xi64>, %c: tensor<8x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) : (tensor<2x9x16xf32>, tensor<2x9xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> !onnx.unknown loc("rot_seq")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rot_bf16' (RotaryEmbedding): input has element type bf16: expected f32 or f16 (onnxruntime's CPU kernel)
func.func @f(%x: tensor<2x4x16xbf16>, %p: tensor<1xi64>, %c: tensor<8x4xbf16>) -> !onnx.unknown {
  %0 = "com_microsoft.rotary_embedding"(%x, %p, %c, %c) : (tensor<2x4x16xbf16>, tensor<1xi64>, tensor<8x4xbf16>, tensor<8x4xbf16>) -> !onnx.unknown loc("rot_bf16")
  return %0 : !onnx.unknown
}
