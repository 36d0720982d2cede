// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'tb' (FusedMatMul): transBatchA=1 / transBatchB=0 need inputs of one rank >= 3: A [2x4x5], B [5x6]
func.func @f(%a: tensor<2x4x5xf32>, %b: tensor<5x6xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_mat_mul"(%a, %b) {alpha = 1.0 : f32, transA = 0 : si64, transB = 0 : si64, transBatchA = 1 : si64, transBatchB = 0 : si64} : (tensor<2x4x5xf32>, tensor<5x6xf32>) -> !onnx.unknown loc("tb")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'k' (FusedMatMul): inner dimensions differ: A [4x5] (transA=1, transBatchA=0) has K = 4, B [5x6] (transB=0, transBatchB=0) has K = 5
func.func @f(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_mat_mul"(%a, %b) {alpha = 1.0 : f32, transA = 1 : si64, transB = 0 : si64, transBatchA = 0 : si64, transBatchB = 0 : si64} : (tensor<4x5xf32>, tensor<5x6xf32>) -> !onnx.unknown loc("k")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'act' (FusedConv): activation 'Gelu' is not supported (expected one of Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid)
func.func @f(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_conv"(%x, %k) {activation = "Gelu", auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> !onnx.unknown loc("act")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'hs' (FusedConv): activation 'HardSigmoid' takes 2 activation_params, got 1
func.func @f(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_conv"(%x, %k) {activation = "HardSigmoid", activation_params = array<f32: 0.2>, auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> !onnx.unknown loc("hs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'bias' (FusedConv): bias 'B' has shape [5]: expected 4 elements (output channels), got 5
func.func @f(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>, %b: tensor<5xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_conv"(%x, %k, %b) {activation = "Relu", auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>, tensor<5xf32>) -> !onnx.unknown loc("bias")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'z' (FusedConv): input 'Z' has shape [1x4x5x5]: expected the convolution's output shape [1x4x3x3]
func.func @f(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>, %z: tensor<1x4x5x5xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_conv"(%x, %k, %z) {activation = "Relu", auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>, tensor<1x4x5x5xf32>) -> !onnx.unknown loc("z")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'f64' (FusedConv): element type double is not supported (supported: float, float16; onnxruntime's CPU provider runs no other)
func.func @f(%x: tensor<1x2x5x5xf64>, %k: tensor<4x2x3x3xf64>) -> !onnx.unknown {
  %0 = "com_microsoft.fused_conv"(%x, %k) {activation = "Relu", auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x2x5x5xf64>, tensor<4x2x3x3xf64>) -> !onnx.unknown loc("f64")
  return %0 : !onnx.unknown
}
