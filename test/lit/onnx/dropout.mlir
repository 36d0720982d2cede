// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @dropout
// CHECK: "onnx.dropout"{{.*}} -> (tensor<?x8xf32>, tensor<?x8xi1>)
// CHECK: "onnx.dropout_v10"{{.*}} -> (tensor<?x8xf32>, tensor<?x8xi1>)
// CHECK: "onnx.dropout_v7"{{.*}} -> (tensor<?x8xf32>, tensor<?x8xf32>)
func.func @dropout(%x: tensor<?x8xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0:2 = "onnx.dropout"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  %1:2 = "onnx.dropout_v10"(%x) {ratio = 0.5 : f32} : (tensor<?x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  %2:2 = "onnx.dropout_v7"(%x) {ratio = 0.5 : f32} : (tensor<?x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#1, %1#1, %2#1 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// CHECK-LABEL: func.func @lrn
// CHECK: "onnx.lrn"{{.*}} -> tensor<?x8x5x5xf32>
func.func @lrn(%x: tensor<?x8x5x5xf32>) -> !onnx.unknown {
  %0 = "onnx.lrn"(%x) {alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32, size = 3 : si64} : (tensor<?x8x5x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// CHECK-LABEL: func.func @flatten
// CHECK: "onnx.flatten"{{.*}} -> tensor<?x60xf32>
// CHECK: "onnx.flatten_v11"{{.*}} -> tensor<?x5xf32>
// CHECK: "onnx.flatten_v9"{{.*}} -> tensor<1x?xf32>
// CHECK: "onnx.flatten"{{.*}} -> tensor<6x20xf32>
func.func @flatten(%x: tensor<?x3x4x5xf32>, %y: tensor<2x3x4x5xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.flatten"(%x) {axis = 1 : si64} : (tensor<?x3x4x5xf32>) -> !onnx.unknown
  %1 = "onnx.flatten_v11"(%x) {axis = -1 : si64} : (tensor<?x3x4x5xf32>) -> !onnx.unknown
  %2 = "onnx.flatten_v9"(%x) {axis = 0 : si64} : (tensor<?x3x4x5xf32>) -> !onnx.unknown
  %3 = "onnx.flatten"(%y) {axis = 2 : si64} : (tensor<2x3x4x5xf32>) -> !onnx.unknown
  return %0, %1, %2, %3 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}
