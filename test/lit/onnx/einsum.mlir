// RUN: %opt %s --shape-inference | FileCheck %s

// '...' dims broadcast across the inputs (onnx.shape_inference takes the
// first input's: [1, 3] here); a static 1 label size gives way to the other.
// CHECK-LABEL: func.func @ellipsis_broadcast
// CHECK: "onnx.einsum_v12"{{.*}} -> tensor<2x3xf32>
// CHECK: "onnx.einsum_v12"{{.*}} -> tensor<5x?xf32>
func.func @ellipsis_broadcast(%a: tensor<1x3x4xf32>, %b: tensor<2x3x4xf32>, %c: tensor<5x1xf32>, %d: tensor<?x?xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "...j,...j->...", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1x3x4xf32>, tensor<2x3x4xf32>) -> !onnx.unknown
  %1 = "onnx.einsum_v12"(%c, %d) {equation = "ij,jk->ik", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<5x1xf32>, tensor<?x?xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// Implicit output: '...' first, then the labels used once, sorted.
// CHECK-LABEL: func.func @implicit
// CHECK: "onnx.einsum_v12"{{.*}} -> tensor<7x3x2xf32>
func.func @implicit(%a: tensor<7x2x3xf32>) -> !onnx.unknown {
  %0 = "onnx.einsum_v12"(%a) {equation = "...ba", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<7x2x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
