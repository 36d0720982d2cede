// RUN: %opt %s --shape-inference | FileCheck %s

// Loss with reduction 'none' has the target's shape.
// CHECK-LABEL: func.func @loss
// CHECK: "onnx.softmax_cross_entropy_loss"{{.*}} -> tensor<?xf32>
func.func @loss(%x: tensor<?x4xf32>, %t: tensor<?xi64>) -> !onnx.unknown {
  %0 = "onnx.softmax_cross_entropy_loss"(%x, %t) {reduction = "none"} : (tensor<?x4xf32>, tensor<?xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
