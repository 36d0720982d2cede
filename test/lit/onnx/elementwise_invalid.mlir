// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'add0' (Add): inputs are not broadcast-compatible: [2x3] vs [4x2]
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> !onnx.unknown {
  %0 = "onnx.add"(%a, %b) : (tensor<2x3xf32>, tensor<4x2xf32>) -> !onnx.unknown loc("add0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'add1' (Add): input 'B' has type tensor(int64) but 'A' has tensor(float) (both are T)
func.func @g(%a: tensor<2xf32>, %b: tensor<2xi64>) -> !onnx.unknown {
  %0 = "onnx.add"(%a, %b) : (tensor<2xf32>, tensor<2xi64>) -> !onnx.unknown loc("add1")
  return %0 : !onnx.unknown
}
