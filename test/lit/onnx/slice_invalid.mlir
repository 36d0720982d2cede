// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'sl0' (Slice): axis 3 is out of range for rank 2 (expected [-2, 1])
func.func @f(%x: tensor<6x7xf32>) -> !onnx.unknown {
  %0 = "onnx.slice_v1"(%x) {starts = array<i64: 1>, ends = array<i64: 2>, axes = array<i64: 3>} : (tensor<6x7xf32>) -> !onnx.unknown loc("sl0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sl1' (Slice): starts, ends, axes and steps must have the same length, got starts 1, ends 2
func.func @f(%x: tensor<6x7xf32>, %s: tensor<1xi64>, %e: tensor<2xi64>) -> !onnx.unknown {
  %0 = "onnx.slice"(%x, %s, %e) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<6x7xf32>, tensor<1xi64>, tensor<2xi64>) -> !onnx.unknown loc("sl1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sl2' (Slice): steps [0] has a 0 step
func.func @f(%x: tensor<6x7xf32>, %s: tensor<1xi64>) -> !onnx.unknown {
  %st = "onnx.constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.slice"(%x, %s, %s, %s, %st) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<6x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> !onnx.unknown loc("sl2")
  return %0 : !onnx.unknown
}
