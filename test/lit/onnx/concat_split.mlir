// RUN: %opt %s --shape-inference | FileCheck %s
// (Concat cannot be written in generic form here: the IRDL variadic operand
// wants a 64-entry operandSegmentSizes, see the
// resultSegmentSizes below as the importer prints them; it is tested from pytest.)

// CHECK-LABEL: func.func @split
// CHECK: "onnx.split"{{.*}} -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>)
// CHECK: "onnx.split_v13"{{.*}} -> (tensor<?x2xf32>, tensor<?x5xf32>)
// CHECK: "onnx.split_v11"{{.*}} -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>)
func.func @split(%x: tensor<?x7xf32>) -> !onnx.unknown {
  %0:3 = "onnx.split"(%x) {axis = 1 : si64, num_outputs = 3 : si64, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x7xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  %s = "onnx.constant"() {value = dense<[2, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %1:2 = "onnx.split_v13"(%x, %s) {axis = -1 : si64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x7xf32>, tensor<2xi64>) -> (!onnx.unknown, !onnx.unknown)
  %2:3 = "onnx.split_v11"(%x) {axis = 1 : si64, split = array<i64: 3, 3, 1>, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x7xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}
