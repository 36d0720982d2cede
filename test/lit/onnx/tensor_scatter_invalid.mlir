// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 't0' (TensorScatter): attribute 'mode' = 'ring': expected 'linear' or 'circular'
func.func @f(%c: tensor<2x8x4xf32>, %u: tensor<2x1x4xf32>) -> !onnx.unknown {
  %0 = "onnx.tensor_scatter"(%c, %u) {axis = -2 : si64, mode = "ring"} : (tensor<2x8x4xf32>, tensor<2x1x4xf32>) -> !onnx.unknown loc("t0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 't1' (TensorScatter): update dim 0 is 3 but past_cache dim 0 is 2; they must be equal
func.func @f(%c: tensor<2x8x4xf32>, %u: tensor<3x1x4xf32>) -> !onnx.unknown {
  %0 = "onnx.tensor_scatter"(%c, %u) {axis = -2 : si64, mode = "linear"} : (tensor<2x8x4xf32>, tensor<3x1x4xf32>) -> !onnx.unknown loc("t1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 't2' (TensorScatter): write_indices has 3 elements for a batch of 2
func.func @f(%c: tensor<2x8x4xf32>, %u: tensor<2x1x4xf32>, %w: tensor<3xi64>) -> !onnx.unknown {
  %0 = "onnx.tensor_scatter"(%c, %u, %w) {axis = 1 : si64, mode = "circular"} : (tensor<2x8x4xf32>, tensor<2x1x4xf32>, tensor<3xi64>) -> !onnx.unknown loc("t2")
  return %0 : !onnx.unknown
}
