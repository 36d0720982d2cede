// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @dft
// CHECK: "onnx.dft_v17"{{.*}} -> tensor<2x6x2xf32>
// CHECK: "onnx.dft_v17"{{.*}} -> tensor<2x8x1xf32>
func.func @dft(%x: tensor<2x10x1xf32>, %y: tensor<2x5x2xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 1 : si64} : (tensor<2x10x1xf32>) -> !onnx.unknown
  %1 = "onnx.dft_v17"(%y) {axis = 1 : si64, inverse = 1 : si64, onesided = 1 : si64} : (tensor<2x5x2xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
