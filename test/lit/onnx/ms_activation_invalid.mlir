// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'bg' (BiasGelu): input 'B' has shape [7]: expected 8 elements (the last dim of the input [2x8]), got 7
func.func @f(%x: tensor<2x8xf32>, %b: tensor<7xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.bias_gelu"(%x, %b) : (tensor<2x8xf32>, tensor<7xf32>) -> !onnx.unknown loc("bg")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'fg' (FastGelu): input 'bias' has shape [1x8]: expected rank 1 (the last dim of the input), got rank 2
func.func @f(%x: tensor<2x8xf32>, %b: tensor<1x8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fast_gelu"(%x, %b) : (tensor<2x8xf32>, tensor<1x8xf32>) -> !onnx.unknown loc("fg")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'fg0' (FastGelu): input 'X' is a scalar: expected rank >= 1 (the bias is added along the last dim)
func.func @f(%x: tensor<f32>) -> !onnx.unknown {
  %0 = "com_microsoft.fast_gelu"(%x) : (tensor<f32>) -> !onnx.unknown loc("fg0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'g64' (Gelu): element type double is not supported (supported: float, float16; onnxruntime's CPU provider runs no other)
func.func @f(%x: tensor<2x8xf64>) -> !onnx.unknown {
  %0 = "com_microsoft.gelu"(%x) : (tensor<2x8xf64>) -> !onnx.unknown loc("g64")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'qbf' (QuickGelu): element type bfloat16 is not supported (supported: float, float16, double; onnxruntime's CPU provider runs no other)
func.func @f(%x: tensor<2x8xbf16>) -> !onnx.unknown {
  %0 = "com_microsoft.quick_gelu"(%x) {alpha = 1.702 : f32} : (tensor<2x8xbf16>) -> !onnx.unknown loc("qbf")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ba' (BiasAdd): input 'X' has shape [6x8]: expected rank 3 (N, S, C), got rank 2
func.func @f(%x: tensor<6x8xf32>, %b: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.bias_add"(%x, %b, %x) : (tensor<6x8xf32>, tensor<8xf32>, tensor<6x8xf32>) -> !onnx.unknown loc("ba")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ba_skip' (BiasAdd): input 'skip' has shape [2x4x8]: expected X's shape [2x3x8] (dim 1: 3, got 4)
func.func @f(%x: tensor<2x3x8xf32>, %b: tensor<8xf32>, %s: tensor<2x4x8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.bias_add"(%x, %b, %s) : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<2x4x8xf32>) -> !onnx.unknown loc("ba_skip")
  return %0 : !onnx.unknown
}
