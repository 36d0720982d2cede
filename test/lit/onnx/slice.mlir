// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @slice
// CHECK: "onnx.slice"{{.*}} -> tensor<2x?x7xf32>
// CHECK: "onnx.slice"{{.*}} -> tensor<6x?x3xf32>
// CHECK: "onnx.slice"{{.*}} -> tensor<?x?x?xf32>
// CHECK: "onnx.slice_v1"{{.*}} -> tensor<5x?x7xf32>
func.func @slice(%x: tensor<6x?x7xf32>, %dyn: tensor<1xi64>) -> !onnx.unknown {
  %s = "onnx.constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.slice"(%x, %s, %e) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<6x?x7xf32>, tensor<1xi64>, tensor<1xi64>) -> !onnx.unknown
  %s2 = "onnx.constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %e2 = "onnx.constant"() {value = dense<[-9223372036854775807]> : tensor<1xi64>} : () -> tensor<1xi64>
  %a2 = "onnx.constant"() {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %st2 = "onnx.constant"() {value = dense<[-3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %1 = "onnx.slice"(%x, %s2, %e2, %a2, %st2) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<6x?x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> !onnx.unknown
  %2 = "onnx.slice"(%x, %s, %e, %dyn) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>} : (tensor<6x?x7xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> !onnx.unknown
  %3 = "onnx.slice_v1"(%x) {starts = array<i64: 1>, ends = array<i64: 100>} : (tensor<6x?x7xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
