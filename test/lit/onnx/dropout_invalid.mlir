// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'fl' (Flatten): attribute 'axis' = 5: expected a value in [-4, 4] for input of rank 4
func.func @f(%x: tensor<2x3x4x5xf32>) -> !onnx.unknown {
  %0 = "onnx.flatten"(%x) {axis = 5 : si64} : (tensor<2x3x4x5xf32>) -> !onnx.unknown loc("fl")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'fl9' (Flatten): attribute 'axis' = -1: expected a value in [0, 4] for input of rank 4
func.func @f(%x: tensor<2x3x4x5xf32>) -> !onnx.unknown {
  %0 = "onnx.flatten_v9"(%x) {axis = -1 : si64} : (tensor<2x3x4x5xf32>) -> !onnx.unknown loc("fl9")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'do' (Dropout): attribute 'ratio' = 1.5: expected a value in [0, 1)
func.func @f(%x: tensor<2x3xf32>) -> !onnx.unknown {
  %0 = "onnx.dropout_v10"(%x) {ratio = 1.5 : f32} : (tensor<2x3xf32>) -> !onnx.unknown loc("do")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'do12' (Dropout): input 'ratio' has shape [2]: expected a scalar (rank 0), got rank 1
func.func @f(%x: tensor<2x3xf32>, %r: tensor<2xf32>) -> !onnx.unknown {
  %0 = "onnx.dropout_v12"(%x, %r) {operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> !onnx.unknown loc("do12")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'lrn' (LRN): attribute 'size' = 0: expected >= 1
func.func @f(%x: tensor<1x3x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.lrn"(%x) {alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32, size = 0 : si64} : (tensor<1x3x4x4xf32>) -> !onnx.unknown loc("lrn")
  return %0 : !onnx.unknown
}
