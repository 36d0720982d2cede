// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'mha_hidden' (MultiHeadAttention): key dim 2 is 16: expected query's hidden size 32
func.func @f(%q: tensor<2x3x32xf32>, %k: tensor<2x5x16xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.multi_head_attention"(%q, %k, %k) {num_heads = 2 : si64, unidirectional = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x3x32xf32>, tensor<2x5x16xf32>, tensor<2x5x16xf32>) -> !onnx.unknown loc("mha_hidden")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mha_heads' (MultiHeadAttention): query hidden size 30 is not a multiple of num_heads 4
func.func @f(%q: tensor<2x3x30xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.multi_head_attention"(%q, %q, %q) {num_heads = 4 : si64, unidirectional = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x3x30xf32>, tensor<2x3x30xf32>, tensor<2x3x30xf32>) -> !onnx.unknown loc("mha_heads")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mha_past' (MultiHeadAttention): inputs 'past_key' and 'past_value' must be both present or both absent
func.func @f(%q: tensor<2x3x32xf32>, %p: tensor<2x2x4x16xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.multi_head_attention"(%q, %q, %q, %p) {num_heads = 2 : si64, unidirectional = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x2x4x16xf32>) -> !onnx.unknown loc("mha_past")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mha_bias' (MultiHeadAttention): attention_bias dim 3 is 4: expected the total sequence length 3
func.func @f(%q: tensor<2x3x32xf32>, %ab: tensor<1x2x3x4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.multi_head_attention"(%q, %q, %q, %ab) {num_heads = 2 : si64, unidirectional = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<2x3x32xf32>, tensor<1x2x3x4xf32>) -> !onnx.unknown loc("mha_bias")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'att_w' (Attention): weights dim 0 is 16: expected the input hidden size 24
func.func @f(%x: tensor<2x3x24xf32>, %w: tensor<16x96xf32>, %b: tensor<96xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.attention"(%x, %w, %b) {num_heads = 2 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, unidirectional = 0 : si64} : (tensor<2x3x24xf32>, tensor<16x96xf32>, tensor<96xf32>) -> !onnx.unknown loc("att_w")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'att_sizes' (Attention): the Q hidden size 32 differs from the K hidden size 16
func.func @f(%x: tensor<2x3x24xf32>, %w: tensor<24x80xf32>, %b: tensor<80xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.attention"(%x, %w, %b) {num_heads = 2 : si64, qkv_hidden_sizes = array<i64: 32, 16, 32>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, unidirectional = 0 : si64} : (tensor<2x3x24xf32>, tensor<24x80xf32>, tensor<80xf32>) -> !onnx.unknown loc("att_sizes")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'att_mask' (Attention): mask_index has shape [2, 5]: expected [B, T] = [2, 3] (or [B or 1, 1])
func.func @f(%x: tensor<2x3x24xf32>, %w: tensor<24x96xf32>, %b: tensor<96xf32>, %m: tensor<2x5xi32>) -> !onnx.unknown {
  %0 = "com_microsoft.attention"(%x, %w, %b, %m) {num_heads = 2 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, unidirectional = 0 : si64} : (tensor<2x3x24xf32>, tensor<24x96xf32>, tensor<96xf32>, tensor<2x5xi32>) -> !onnx.unknown loc("att_mask")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gqa_groups' (GroupQueryAttention): num_heads 4 is not a multiple of kv_num_heads 3
func.func @f(%q: tensor<2x3x64xf32>, %sl: tensor<2xi32>, %ts: tensor<i32>) -> !onnx.unknown {
  %0 = "com_microsoft.group_query_attention"(%q, %q, %q, %sl, %ts) {causal = 1 : si64, k_quant_type = "NONE", kv_num_heads = 3 : si64, local_window_size = -1 : si64, num_heads = 4 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, qk_norm_epsilon = 9.99999997E-7 : f32, qk_output = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 0>, sliding_window_cache = 0 : si64, smooth_softmax = -1 : si64, v_quant_type = "NONE"} : (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2xi32>, tensor<i32>) -> !onnx.unknown loc("gqa_groups")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gqa_kv' (GroupQueryAttention): key dim 2 is 64: expected kv_num_heads * head size = 32
func.func @f(%q: tensor<2x3x64xf32>, %sl: tensor<2xi32>, %ts: tensor<i32>) -> !onnx.unknown {
  %0 = "com_microsoft.group_query_attention"(%q, %q, %q, %sl, %ts) {causal = 1 : si64, k_quant_type = "NONE", kv_num_heads = 2 : si64, local_window_size = -1 : si64, num_heads = 4 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, qk_norm_epsilon = 9.99999997E-7 : f32, qk_output = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 0>, sliding_window_cache = 0 : si64, smooth_softmax = -1 : si64, v_quant_type = "NONE"} : (tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2x3x64xf32>, tensor<2xi32>, tensor<i32>) -> !onnx.unknown loc("gqa_kv")
  return %0 : !onnx.unknown
}
