// RUN: %opt %s --lower-to-linalg | FileCheck %s

// A direct DFT: one generic summing over the signal index, in f64.
// CHECK-LABEL: func.func @dft
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: math.cos
// CHECK: math.sin
// CHECK: arith.addf {{.*}} : f64
// CHECK: arith.truncf
func.func @dft(%x: tensor<2x10x1xf32>) -> tensor<2x10x2xf32> {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x1xf32>) -> tensor<2x10x2xf32>
  return %0 : tensor<2x10x2xf32>
}

// STFT: one generic over (batch, frame, bin, re/im) summing the windowed frame in
// f64; frame_step and frame_length constants give a static result, no checks.
// CHECK-LABEL: func.func @stft
// CHECK-NOT: om_check_failed
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%arg1 : tensor<8xf32>) outs({{.*}} : tensor<2x3x5x2xf64>)
// CHECK: arith.muli {{.*}}, %c4 : index
// CHECK: tensor.extract %arg0
// CHECK: math.cos
// CHECK: math.sin
// CHECK: arith.addf {{.*}} : f64
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @stft(%x: tensor<2x16x1xf32>, %w: tensor<8xf32>) -> tensor<2x3x5x2xf32> {
  %s = "onnx.constant"() {value = dense<4> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s, %w, %n) {onesided = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (tensor<2x16x1xf32>, tensor<i64>, tensor<8xf32>, tensor<i64>) -> tensor<2x3x5x2xf32>
  return %0 : tensor<2x3x5x2xf32>
}

// A dynamic signal length: the frame count computed at run time, the signal
// checked to be at least frame_length long.
// CHECK-LABEL: func.func @stft_dynamic
// CHECK: arith.floordivsi
// CHECK: om_check_failed
// CHECK: tensor.empty(%{{.*}}) : tensor<?x?x8x2xf64>
// CHECK: linalg.generic
func.func @stft_dynamic(%x: tensor<?x?x2xf64>) -> tensor<?x?x8x2xf64> {
  %s = "onnx.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.stft"(%x, %s, %n) {onesided = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<?x?x2xf64>, tensor<i64>, tensor<i64>) -> tensor<?x?x8x2xf64>
  return %0 : tensor<?x?x8x2xf64>
}

// MelWeightMatrix with constant bins / length / rate: static [9, 8]; the edges
// (floor of a bin position) in one generic, the triangles in a second one.
// CHECK-LABEL: func.func @mel
// CHECK-NOT: om_check_failed
// CHECK: linalg.generic {{.*}}outs({{.*}} : tensor<10xi64>)
// CHECK: math.floor
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}}outs({{.*}} : tensor<9x8xf32>)
// CHECK: tensor.extract
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @mel(%lo: tensor<f32>, %hi: tensor<f32>) -> tensor<9x8xf32> {
  %b = "onnx.constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
  %r = "onnx.constant"() {value = dense<8192> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.mel_weight_matrix"(%b, %n, %r, %lo, %hi) {output_datatype = 1 : si64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}

// Inputs at run time: the result [dft_length / 2 + 1, num_mel_bins] sized at run time.
// CHECK-LABEL: func.func @mel_dynamic
// CHECK: om_check_failed
// CHECK: arith.floordivsi %{{.*}}, %c2
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf64>
// CHECK: linalg.generic
func.func @mel_dynamic(%b: tensor<i64>, %n: tensor<i64>, %r: tensor<i64>, %lo: tensor<f64>, %hi: tensor<f64>) -> tensor<?x?xf64> {
  %0 = "onnx.mel_weight_matrix"(%b, %n, %r, %lo, %hi) {output_datatype = 11 : si64} : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<f64>, tensor<f64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}
