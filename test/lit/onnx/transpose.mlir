// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @transpose
// CHECK: "onnx.transpose"{{.*}} -> tensor<4x?x2xf32>
// CHECK: "onnx.transpose"{{.*}} -> tensor<2x4x?xf32>
func.func @transpose(%x: tensor<2x?x4xf32>) -> !onnx.unknown {
  %0 = "onnx.transpose"(%x) : (tensor<2x?x4xf32>) -> !onnx.unknown
  %1 = "onnx.transpose"(%x) {perm = array<i64: 0, 2, 1>} : (tensor<2x?x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
