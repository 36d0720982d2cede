// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'sm' (Softmax): attribute 'axis' = 3: expected a value in [-3, 2] for input of rank 3
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.softmax"(%x) {axis = 3 : si64} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("sm")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'lsm' (LogSoftmax): attribute 'axis' = -4: expected a value in [-3, 2] for input of rank 3
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.log_softmax_v11"(%x) {axis = -4 : si64} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("lsm")
  return %0 : !onnx.unknown
}
