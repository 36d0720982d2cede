// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'gemm_k' (Gemm): inner dimensions differ: A [3x4] (transA=0) has K = 4, B [5x6] (transB=0) has K = 5
func.func @f(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) -> !onnx.unknown {
  %0 = "onnx.gemm"(%a, %b) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<3x4xf32>, tensor<5x6xf32>) -> !onnx.unknown loc("gemm_k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gemm_c' (Gemm): input 'C' has shape [2x6]: not unidirectionally broadcastable to [M, N] = [3x6] (M: expected 1 or 3, got 2)
func.func @f(%a: tensor<3x4xf32>, %b: tensor<4x6xf32>, %c: tensor<2x6xf32>) -> !onnx.unknown {
  %0 = "onnx.gemm"(%a, %b, %c) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<3x4xf32>, tensor<4x6xf32>, tensor<2x6xf32>) -> !onnx.unknown loc("gemm_c")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gemm_rank' (Gemm): input 'A' has shape [2x3x4]: expected rank 2, got rank 3
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<4x6xf32>) -> !onnx.unknown {
  %0 = "onnx.gemm_v11"(%a, %b) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<2x3x4xf32>, tensor<4x6xf32>) -> !onnx.unknown loc("gemm_rank")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mm_k' (MatMul): inner dimensions differ: A [?x3x4] has K = 4, B [3x5] has K = 3
func.func @f(%a: tensor<?x3x4xf32>, %b: tensor<3x5xf32>) -> !onnx.unknown {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<?x3x4xf32>, tensor<3x5xf32>) -> !onnx.unknown loc("mm_k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mm_batch' (MatMul): inputs are not broadcast-compatible: [2] vs [3]
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) -> !onnx.unknown {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> !onnx.unknown loc("mm_batch")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mmi_zp' (MatMulInteger): input 'a_zero_point' has shape [2x3]: expected a scalar or 1-D (per-row) tensor, got rank 2
func.func @f(%a: tensor<3x4xui8>, %b: tensor<4x5xui8>, %az: tensor<2x3xui8>) -> !onnx.unknown {
  %0 = "onnx.mat_mul_integer"(%a, %b, %az) {operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<3x4xui8>, tensor<4x5xui8>, tensor<2x3xui8>) -> !onnx.unknown loc("mmi_zp")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'es' (Einsum): label 'j' has size 3 in one input and 4 in input 1 (equation 'ij,jk->ik')
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> !onnx.unknown {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "ij,jk->ik", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>, tensor<4x5xf32>) -> !onnx.unknown loc("es")
  return %0 : !onnx.unknown
}
