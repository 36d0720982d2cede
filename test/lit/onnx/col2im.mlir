// RUN: %opt %s --shape-inference | FileCheck %s

// Constant image and block shapes give the result; run-time ones its rank.
// CHECK-LABEL: func.func @col2im
// CHECK: "onnx.col2_im"{{.*}} -> tensor<1x2x5x5xf32>
// CHECK: "onnx.col2_im"{{.*}} -> tensor<1x?x?x?xf32>
func.func @col2im(%x: tensor<1x10x5xf32>, %i: tensor<2xi64>, %b: tensor<2xi64>) -> (!onnx.unknown, !onnx.unknown) {
  %ic = "onnx.constant"() {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %bc = "onnx.constant"() {value = dense<[1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.col2_im"(%x, %ic, %bc) : (tensor<1x10x5xf32>, tensor<2xi64>, tensor<2xi64>) -> !onnx.unknown
  %1 = "onnx.col2_im"(%x, %i, %b) : (tensor<1x10x5xf32>, tensor<2xi64>, tensor<2xi64>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
