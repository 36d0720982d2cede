// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'l' (SoftmaxCrossEntropyLoss): target has shape [5] but input has [3x4]: dim 0 differs (5 vs 3)
func.func @f(%x: tensor<3x4xf32>, %t: tensor<5xi64>) -> !onnx.unknown {
  %0 = "onnx.softmax_cross_entropy_loss"(%x, %t) {reduction = "none"} : (tensor<3x4xf32>, tensor<5xi64>) -> !onnx.unknown loc("l")
  return %0 : !onnx.unknown
}
