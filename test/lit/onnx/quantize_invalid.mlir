// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'dq' (DequantizeLinear): scale has 4 elements but input dim 1 (axis) is 3
func.func @f(%x: tensor<2x3xui8>, %s: tensor<4xf32>, %z: tensor<4xui8>) -> !onnx.unknown {
  %0 = "onnx.dequantize_linear_v23"(%x, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64} : (tensor<2x3xui8>, tensor<4xf32>, tensor<4xui8>) -> !onnx.unknown loc("dq")
  return %0 : !onnx.unknown
}
