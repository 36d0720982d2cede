// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @gather
// CHECK: "onnx.gather"{{.*}} -> tensor<3x2x?x5xf32>
// CHECK: "onnx.gather_elements"{{.*}} -> tensor<2x?xf32>
// CHECK: "onnx.gather_nd"{{.*}} -> tensor<2x5xf32>
// CHECK: "onnx.scatter_nd"{{.*}} -> tensor<3x?x5xf32>
func.func @gather(%x: tensor<3x?x5xf32>, %i: tensor<2x?xi64>, %j: tensor<2x2xi64>, %u: tensor<2x5xf32>) -> !onnx.unknown {
  %0 = "onnx.gather"(%x, %i) {axis = 1 : si64} : (tensor<3x?x5xf32>, tensor<2x?xi64>) -> !onnx.unknown
  %1 = "onnx.gather_elements"(%x, %i) {axis = 0 : si64} : (tensor<3x?x5xf32>, tensor<2x?xi64>) -> !onnx.unknown
  %2 = "onnx.gather_nd"(%x, %j) {batch_dims = 0 : si64} : (tensor<3x?x5xf32>, tensor<2x2xi64>) -> !onnx.unknown
  %3 = "onnx.scatter_nd"(%x, %j, %u) {reduction = "none"} : (tensor<3x?x5xf32>, tensor<2x2xi64>, tensor<2x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
