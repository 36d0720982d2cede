// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @pad
// CHECK: "onnx.pad"{{.*}} -> tensor<?x10xf32>
// CHECK: "onnx.pad"{{.*}} -> tensor<?x?xf32>
// CHECK: "onnx.pad_v2"{{.*}} -> tensor<?x4xf32>
func.func @pad(%x: tensor<?x5xf32>, %dyn: tensor<4xi64>) -> !onnx.unknown {
  %p = "onnx.constant"() {value = dense<[1, 2, 3, 3]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.pad"(%x, %p) {mode = "constant", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<?x5xf32>, tensor<4xi64>) -> !onnx.unknown
  %1 = "onnx.pad"(%x, %dyn) {mode = "constant", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<?x5xf32>, tensor<4xi64>) -> !onnx.unknown
  %2 = "onnx.pad_v2"(%x) {mode = "edge", pads = array<i64: 0, 0, 0, -1>, value = 0.0 : f32} : (tensor<?x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
