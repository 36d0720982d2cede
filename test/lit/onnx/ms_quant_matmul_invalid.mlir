// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'qg_k' (QGemm): inner dimensions differ: A [3x8] (transA=0) has K = 8, B [4x6] (transB=1) has K = 6
func.func @f(%a: tensor<3x8xui8>, %s: tensor<f32>, %za: tensor<ui8>, %b: tensor<4x6xi8>, %zb: tensor<i8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_gemm"(%a, %s, %za, %b, %s, %zb) {alpha = 1.000000e+00 : f32, transA = 0 : si64, transB = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>} : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>, tensor<4x6xi8>, tensor<f32>, tensor<i8>) -> !onnx.unknown loc("qg_k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'qg_bs' (QGemm): input 'b_scale' has shape [3]: expected a scalar or a 1-D tensor of 1 or N = 4 elements (per column)
func.func @f(%a: tensor<3x8xui8>, %s: tensor<f32>, %za: tensor<ui8>, %b: tensor<8x4xi8>, %sb: tensor<3xf32>, %zb: tensor<i8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_gemm"(%a, %s, %za, %b, %sb, %zb) {alpha = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>} : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x4xi8>, tensor<3xf32>, tensor<i8>) -> !onnx.unknown loc("qg_bs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'qg_za' (QGemm): input 'a_zero_point' has shape [3]: expected a scalar or one element
func.func @f(%a: tensor<3x8xui8>, %s: tensor<f32>, %za: tensor<3xui8>, %b: tensor<8x4xi8>, %zb: tensor<i8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_gemm"(%a, %s, %za, %b, %s, %zb) {alpha = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0>} : (tensor<3x8xui8>, tensor<f32>, tensor<3xui8>, tensor<8x4xi8>, tensor<f32>, tensor<i8>) -> !onnx.unknown loc("qg_za")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'qg_c' (QGemm): input 'C' has shape [3x5]: not broadcastable to [M, N] = [3x4] (N: expected 1 or 4, got 5)
func.func @f(%a: tensor<3x8xui8>, %s: tensor<f32>, %za: tensor<ui8>, %b: tensor<8x4xi8>, %zb: tensor<i8>, %c: tensor<3x5xi32>) -> !onnx.unknown {
  %0 = "com_microsoft.q_gemm"(%a, %s, %za, %b, %s, %zb, %c) {alpha = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0>} : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x4xi8>, tensor<f32>, tensor<i8>, tensor<3x5xi32>) -> !onnx.unknown loc("qg_c")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'qg_yz' (QGemm): input 'y_zero_point' is given without 'y_scale': not supported (onnxruntime writes the int32 accumulators into the 8-bit output)
func.func @f(%a: tensor<3x8xui8>, %s: tensor<f32>, %za: tensor<ui8>, %b: tensor<8x4xi8>, %zb: tensor<i8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_gemm"(%a, %s, %za, %b, %s, %zb, %za) {alpha = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 1>} : (tensor<3x8xui8>, tensor<f32>, tensor<ui8>, tensor<8x4xi8>, tensor<f32>, tensor<i8>, tensor<ui8>) -> !onnx.unknown loc("qg_yz")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mitf_as' (MatMulIntegerToFloat): input 'a_scale' has shape [3x1]: expected a scalar or one element (a per-row a_scale / a_zero_point is not supported)
func.func @f(%a: tensor<3x8xui8>, %b: tensor<8x4xi8>, %sa: tensor<3x1xf32>, %sb: tensor<f32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_integer_to_float"(%a, %b, %sa, %sb) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (tensor<3x8xui8>, tensor<8x4xi8>, tensor<3x1xf32>, tensor<f32>) -> !onnx.unknown loc("mitf_as")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mitf_bs' (MatMulIntegerToFloat): input 'b_scale' has shape [4]: not supported with B [2x8x4] (expected one element, [N] with a 2-D B, or B's shape with dim -2 = 1: per column)
func.func @f(%a: tensor<2x3x8xui8>, %b: tensor<2x8x4xi8>, %sa: tensor<f32>, %sb: tensor<4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_integer_to_float"(%a, %b, %sa, %sb) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>} : (tensor<2x3x8xui8>, tensor<2x8x4xi8>, tensor<f32>, tensor<4xf32>) -> !onnx.unknown loc("mitf_bs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dqmm_bias' (DynamicQuantizeMatMul): input 'bias' has shape [5]: expected [N] = [4]
func.func @f(%a: tensor<3x8xf32>, %b: tensor<8x4xi8>, %sb: tensor<f32>, %bias: tensor<5xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_mat_mul"(%a, %b, %sb, %bias) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>} : (tensor<3x8xf32>, tensor<8x4xi8>, tensor<f32>, tensor<5xf32>) -> !onnx.unknown loc("dqmm_bias")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dqmm_k' (DynamicQuantizeMatMul): inner dimensions differ: A [3x8] has K = 8, B [6x4] has K = 6
func.func @f(%a: tensor<3x8xf32>, %b: tensor<6x4xi8>, %sb: tensor<f32>) -> !onnx.unknown {
  %0 = "com_microsoft.dynamic_quantize_mat_mul"(%a, %b, %sb) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<3x8xf32>, tensor<6x4xi8>, tensor<f32>) -> !onnx.unknown loc("dqmm_k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_bits' (MatMulNBits): attribute 'bits' = 3: expected 2, 4 or 8
func.func @f(%a: tensor<3x32xf32>, %b: tensor<4x2x6xui8>, %s: tensor<4x2xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 3 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x32xf32>, tensor<4x2x6xui8>, tensor<4x2xf32>) -> !onnx.unknown loc("nb_bits")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_bs' (MatMulNBits): attribute 'block_size' = 24: expected a power of two >= 16
func.func @f(%a: tensor<3x32xf32>, %b: tensor<4x2x12xui8>, %s: tensor<4x2xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 24 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x32xf32>, tensor<4x2x12xui8>, tensor<4x2xf32>) -> !onnx.unknown loc("nb_bs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_k' (MatMulNBits): input 'A' has shape [3x30]: its last dim must be K = 32
func.func @f(%a: tensor<3x30xf32>, %b: tensor<4x2x8xui8>, %s: tensor<4x2xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x30xf32>, tensor<4x2x8xui8>, tensor<4x2xf32>) -> !onnx.unknown loc("nb_k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_b' (MatMulNBits): input 'B' has shape [4x2x16]: expected [4x2x8]
func.func @f(%a: tensor<3x32xf32>, %b: tensor<4x2x16xui8>, %s: tensor<4x2xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x32xf32>, tensor<4x2x16xui8>, tensor<4x2xf32>) -> !onnx.unknown loc("nb_b")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_z' (MatMulNBits): input 'zero_points' has shape [4x3]: expected [4x2] or [8]
func.func @f(%a: tensor<3x64xf32>, %b: tensor<4x4x8xui8>, %s: tensor<4x4xf32>, %z: tensor<4x3xui8>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s, %z) {K = 64 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x64xf32>, tensor<4x4x8xui8>, tensor<4x4xf32>, tensor<4x3xui8>) -> !onnx.unknown loc("nb_z")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_g' (MatMulNBits): input 'g_idx' is not supported (deprecated; onnxruntime's results with it do not follow the documented formula)
func.func @f(%a: tensor<3x32xf32>, %b: tensor<4x2x8xui8>, %s: tensor<4x2xf32>, %g: tensor<32xi32>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s, %g) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>, weight_prepacked = 0 : si64} : (tensor<3x32xf32>, tensor<4x2x8xui8>, tensor<4x2xf32>, tensor<32xi32>) -> !onnx.unknown loc("nb_g")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nb_bf16' (MatMulNBits): element type bf16 is not supported (float and float16 only: onnxruntime's CPU provider runs no other)
func.func @f(%a: tensor<3x32xbf16>, %b: tensor<4x2x8xui8>, %s: tensor<4x2xbf16>) -> !onnx.unknown {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<3x32xbf16>, tensor<4x2x8xui8>, tensor<4x2xbf16>) -> !onnx.unknown loc("nb_bf16")
  return %0 : !onnx.unknown
}
