// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'p0' (Pad): pads has 2 elements, expected 4 (2 per padded axis of input [3x5])
func.func @f(%x: tensor<3x5xf32>) -> !onnx.unknown {
  %p = "onnx.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.pad"(%x, %p) {mode = "constant", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<3x5xf32>, tensor<2xi64>) -> !onnx.unknown loc("p0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'p1' (Pad): pads -4, -2 give dim 1 of size 5 a negative size
func.func @f(%x: tensor<3x5xf32>) -> !onnx.unknown {
  %0 = "onnx.pad_v2"(%x) {mode = "constant", pads = array<i64: 0, -4, 0, -2>, value = 0.0 : f32} : (tensor<3x5xf32>) -> !onnx.unknown loc("p1")
  return %0 : !onnx.unknown
}
