// RUN: %opt %s --shape-inference | FileCheck %s

// v1/v11 (coerced 2-D) and v13 (single axis) all keep the input shape.
// CHECK-LABEL: func.func @softmax
// CHECK: "onnx.softmax"{{.*}} -> tensor<?x3x4xf32>
// CHECK: "onnx.softmax_v11"{{.*}} -> tensor<?x3x4xf32>
// CHECK: "onnx.log_softmax_v1"{{.*}} -> tensor<?x3x4xf32>
// CHECK: "onnx.hardmax"{{.*}} -> tensor<?x3x4xf32>
func.func @softmax(%x: tensor<?x3x4xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.softmax"(%x) {axis = -1 : si64} : (tensor<?x3x4xf32>) -> !onnx.unknown
  %1 = "onnx.softmax_v11"(%x) {axis = 1 : si64} : (tensor<?x3x4xf32>) -> !onnx.unknown
  %2 = "onnx.log_softmax_v1"(%x) {axis = 2 : si64} : (tensor<?x3x4xf32>) -> !onnx.unknown
  %3 = "onnx.hardmax"(%x) {axis = 0 : si64} : (tensor<?x3x4xf32>) -> !onnx.unknown
  return %0, %1, %2, %3 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}
