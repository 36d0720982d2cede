// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s
// RUN: %opt %s --lower-to-linalg --o3-attention=target=x86-64-v4,threads=1 --split-input-file | FileCheck %s --check-prefix=O3

// MultiHeadAttention (unidirectional, input bias, a raw key padding mask, a
// KV cache): one generic per Q / K / V splits the heads and adds the bias,
// the past keys / values are concatenated before the new ones (the
// presents), the mask [B, 1, S, T] is built (padding: -10000, a later key:
// the lowest f32, rows i < S - 1), then the ONNX Attention lowering's call.
// CHECK-DAG: #[[SPLIT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 16 + d3)>
// CHECK-DAG: #[[BK:.+]] = affine_map<(d0, d1, d2, d3) -> (d1 * 16 + d3 + 32)>
// CHECK-LABEL: func.func private @__om_attention_0
// CHECK-SAME: tensor<?x1x?x?xf32>
// CHECK-LABEL: func.func @mha
// CHECK: linalg.generic {indexing_maps = [#[[SPLIT]], #[[BK]], #{{.*}}]{{.*}} ins(%arg1, %arg3
// CHECK: tensor.insert_slice %arg5 into
// CHECK: tensor.insert_slice %arg6 into
// CHECK: %[[M:.+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<?x1x?x?xf32>)
// CHECK: tensor.extract %arg4
// CHECK: arith.cmpi sle
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: linalg.transpose {{.*}} permutation = [0, 1, 3, 2]
// CHECK: call @__om_attention_0({{.*}}%[[M]]{{.*}}) {om.attention = {group = 1 : i64, mask = true, nan_rows = false, scale = 2.500000e-01 : f32}}
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape {{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<?x?x2x16xf32> into tensor<?x?x32xf32>
// -O3 (AVX-512, head size 16): the call goes to the vector kernel
// O3-LABEL: func.func @mha
// O3: call @__om_attention_k16_0(
// O3-LABEL: func.func private @__om_attention_k16_0
// O3: vector.fma
module attributes {onnx.opset_import = {ai.onnx = 17 : i64, com.microsoft = 1 : i64}} {
func.func @mha(%q: tensor<?x?x32xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>, %bias: tensor<96xf32>, %m: tensor<?x?xi32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
  %0:3 = "com_microsoft.multi_head_attention"(%q, %k, %v, %bias, %m, %pk, %pv) {num_heads = 2 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 0>, unidirectional = 1 : si64} : (tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<96xf32>, tensor<?x?xi32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) loc("mha")
  return %0#0, %0#1, %0#2 : tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}
}

// -----

// Attention (GPT-2: unidirectional, past [2, B, N, P, H], key lengths [B] or
// [2B] at run time): one matmul input @ weights over B * S rows, the three
// head splits read their columns of it (+ bias), past halves concatenated,
// present = [K, V] stacked.
// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 16 + d3 + 64)>
// CHECK-LABEL: func.func @att
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]]
// CHECK: linalg.matmul
// CHECK: tensor.extract_slice %arg4[0, 0, 0, 0, 0]
// CHECK: tensor.extract_slice %arg4[1, 0, 0, 0, 0]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x1x?x?xf32>)
// CHECK: tensor.extract %arg3
// CHECK: call @__om_attention_0(
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0, 0]
// CHECK: tensor.insert_slice %{{.*}}[1, 0, 0, 0, 0]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64, com.microsoft = 1 : i64}} {
func.func @att(%x: tensor<?x?x24xf32>, %w: tensor<24x96xf32>, %bias: tensor<96xf32>, %m: tensor<?xi32>, %past: tensor<2x?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<2x?x2x?x16xf32>) {
  %0:2 = "com_microsoft.attention"(%x, %w, %bias, %m, %past) {num_heads = 2 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1>, unidirectional = 1 : si64} : (tensor<?x?x24xf32>, tensor<24x96xf32>, tensor<96xf32>, tensor<?xi32>, tensor<2x?x2x?x16xf32>) -> (tensor<?x?x32xf32>, tensor<2x?x2x?x16xf32>) loc("att")
  return %0#0, %0#1 : tensor<?x?x32xf32>, tensor<2x?x2x?x16xf32>
}
}

// -----

// GroupQueryAttention (4 query heads on 2 kv heads, KV cache): the present
// buffers [B, 2, max(total, P), 16] are zeros with past[:P_b] and the new
// keys at P_b per batch (a loop; P_b from seqlens_k, 0 for the first
// prompt); the mask is 0 / -inf; the call reads kv head h floordiv 2.
// CHECK: affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func.func @gqa
// CHECK: tensor.extract %arg6[]
// CHECK: arith.maxsi
// CHECK: scf.for
// CHECK: arith.minsi
// CHECK: call @om_check_failed
// CHECK: scf.for {{.*}} -> (tensor<?x2x?x16xf32>)
// CHECK: tensor.extract_slice %arg3
// CHECK: tensor.insert_slice
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x1x?x?xf32>)
// CHECK: tensor.extract %arg5
// CHECK: call @__om_attention_0({{.*}}) {om.attention = {group = 2 : i64, mask = true, nan_rows = false, scale = 2.500000e-01 : f32}}
// O3-LABEL: func.func @gqa
// O3: call @__om_attention_k16_0(
module attributes {onnx.opset_import = {ai.onnx = 17 : i64, com.microsoft = 1 : i64}} {
func.func @gqa(%q: tensor<?x?x64xf32>, %k: tensor<?x?x32xf32>, %v: tensor<?x?x32xf32>, %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>, %sl: tensor<?xi32>, %ts: tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
  %0:3 = "com_microsoft.group_query_attention"(%q, %k, %v, %pk, %pv, %sl, %ts) {causal = 1 : si64, k_quant_type = "NONE", kv_num_heads = 2 : si64, local_window_size = -1 : si64, num_heads = 4 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, qk_norm_epsilon = 9.99999997E-7 : f32, qk_output = 0 : si64, resultSegmentSizes = array<i32: 1, 1, 1, 0>, sliding_window_cache = 0 : si64, smooth_softmax = -1 : si64, v_quant_type = "NONE"} : (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?xi32>, tensor<i32>) -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) loc("gqa")
  return %0#0, %0#1, %0#2 : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
}
}
