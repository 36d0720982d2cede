// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'd' (DFT): input has shape [2x10x3]: the last dim must be 1 (real) or 2 (complex)
func.func @f(%x: tensor<2x10x3xf32>) -> !onnx.unknown {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x3xf32>) -> !onnx.unknown loc("d")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd2' (DFT): axis 2 is the complex dim of the signal (rank 3)
func.func @f(%x: tensor<2x10x2xf32>) -> !onnx.unknown {
  %0 = "onnx.dft_v17"(%x) {axis = 2 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x2xf32>) -> !onnx.unknown loc("d2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 's1' (STFT): onesided = 1 needs a real signal (last dim 1); this one is complex
func.func @f(%x: tensor<1x16x2xf32>, %s: tensor<i64>) -> !onnx.unknown {
  %0 = "onnx.stft"(%x, %s) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x16x2xf32>, tensor<i64>) -> !onnx.unknown loc("s1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 's2' (STFT): frame_step is 0: expected >= 1
func.func @f(%x: tensor<1x16x1xf32>) -> !onnx.unknown {
  %s = "onnx.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x16x1xf32>, tensor<i64>) -> !onnx.unknown loc("s2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 's3' (STFT): window has length 8: expected frame_length = 6
func.func @f(%x: tensor<1x16x1xf32>, %s: tensor<i64>, %w: tensor<8xf32>) -> !onnx.unknown {
  %n = "onnx.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s, %w, %n) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (tensor<1x16x1xf32>, tensor<i64>, tensor<8xf32>, tensor<i64>) -> !onnx.unknown loc("s3")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 's4' (STFT): frame_length 32 is longer than the signal (16 samples)
func.func @f(%x: tensor<1x16x1xf32>, %s: tensor<i64>) -> !onnx.unknown {
  %n = "onnx.constant"() {value = dense<32> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s, %n) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<1x16x1xf32>, tensor<i64>, tensor<i64>) -> !onnx.unknown loc("s4")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'm1' (MelWeightMatrix): input 'dft_length' is 0: expected >= 1
func.func @f(%b: tensor<i64>, %r: tensor<i64>, %lo: tensor<f32>, %hi: tensor<f32>) -> !onnx.unknown {
  %n = "onnx.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.mel_weight_matrix"(%b, %n, %r, %lo, %hi) {output_datatype = 1 : si64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> !onnx.unknown loc("m1")
  return %0 : !onnx.unknown
}
