// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @dft
// CHECK: "onnx.dft_v17"{{.*}} -> tensor<2x6x2xf32>
// CHECK: "onnx.dft_v17"{{.*}} -> tensor<2x8x1xf32>
func.func @dft(%x: tensor<2x10x1xf32>, %y: tensor<2x5x2xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 1 : si64} : (tensor<2x10x1xf32>) -> !onnx.unknown
  %1 = "onnx.dft_v17"(%y) {axis = 1 : si64, inverse = 1 : si64, onesided = 1 : si64} : (tensor<2x5x2xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// STFT: [batch, (L - n) // step + 1, n // 2 + 1 (onesided) or n, 2], n from
// frame_length or the window; MelWeightMatrix: [dft_length // 2 + 1, bins].
// CHECK-LABEL: func.func @stft_mel
// CHECK: "onnx.stft"{{.*}} -> tensor<2x7x5x2xf32>
// CHECK: "onnx.stft"{{.*}} -> tensor<2x3x8x2xf32>
// CHECK: "onnx.mel_weight_matrix"{{.*}} -> tensor<9x8xf64>
func.func @stft_mel(%x: tensor<2x32x1xf32>, %w: tensor<8xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %s = "onnx.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %s2 = "onnx.constant"() {value = dense<12> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s, %w) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<2x32x1xf32>, tensor<i64>, tensor<8xf32>) -> !onnx.unknown
  %1 = "onnx.stft"(%x, %s2, %n) {onesided = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<2x32x1xf32>, tensor<i64>, tensor<i64>) -> !onnx.unknown
  %b = "onnx.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %l = "onnx.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  %r = "onnx.constant"() {value = dense<8000> : tensor<i64>} : () -> tensor<i64>
  %2 = "onnx.mel_weight_matrix"(%b, %l, %r, %lo, %hi) {output_datatype = 11 : si64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
