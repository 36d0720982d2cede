// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'skip_batch' (SkipLayerNormalization): skip dim 0 is 3: expected 1 or input's batch size 2
func.func @f(%x: tensor<2x4x8xf32>, %sk: tensor<3x4x8xf32>, %g: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<8xf32>) -> !onnx.unknown loc("skip_batch")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'skip_4d' (SkipLayerNormalization): input 'input' has shape [1x2x4x8]: expected rank 2 or 3
func.func @f(%x: tensor<1x2x4x8xf32>, %g: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_layer_normalization"(%x, %x, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<8xf32>) -> !onnx.unknown loc("skip_4d")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'skip_2d' (SkipLayerNormalization): input 'skip' has shape [1x4x8]: expected input's shape [4x8]
func.func @f(%x: tensor<4x8xf32>, %sk: tensor<1x4x8xf32>, %g: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<4x8xf32>, tensor<1x4x8xf32>, tensor<8xf32>) -> !onnx.unknown loc("skip_2d")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'skip_gamma' (SkipLayerNormalization): input 'gamma' has 4 elements: expected hidden size 8 (input's last dim)
func.func @f(%x: tensor<?x?x8xf32>, %sk: tensor<?x8xf32>, %g: tensor<4xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<4xf32>) -> !onnx.unknown loc("skip_gamma")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'simp_bias' (SkipSimplifiedLayerNormalization): input 'bias' has 6 elements: expected hidden size 8 (input's last dim)
func.func @f(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<6xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_simplified_layer_normalization"(%x, %x, %g, %b) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<6xf32>) -> !onnx.unknown loc("simp_bias")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'skip_seq' (SkipSimplifiedLayerNormalization): skip dim 0 is 5: expected input's dim 1 (4)
func.func @f(%x: tensor<?x4x8xf32>, %sk: tensor<5x8xf32>, %g: tensor<8xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.skip_simplified_layer_normalization"(%x, %sk, %g) {epsilon = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<?x4x8xf32>, tensor<5x8xf32>, tensor<8xf32>) -> !onnx.unknown loc("skip_seq")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sln_stash' (SimplifiedLayerNormalization): attribute 'stash_type' = 10: only 1 (float) is supported (onnxruntime's CPU kernel)
func.func @f(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.simplified_layer_normalization"(%x, %s) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 10 : si64} : (tensor<2x4xf32>, tensor<4xf32>) -> !onnx.unknown loc("sln_stash")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sln_scale' (SimplifiedLayerNormalization): scale dim 0 is 3: expected 1 or X's dim 1 (4)
func.func @f(%x: tensor<2x4xf32>, %s: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.simplified_layer_normalization"(%x, %s) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : si64} : (tensor<2x4xf32>, tensor<3xf32>) -> !onnx.unknown loc("sln_scale")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sln_axis' (SimplifiedLayerNormalization): attribute 'axis' = 2: expected a value in [-2, 1] for input 'X' of rank 2
func.func @f(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.simplified_layer_normalization"(%x, %s) {axis = 2 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : si64} : (tensor<2x4xf32>, tensor<4xf32>) -> !onnx.unknown loc("sln_axis")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sln_type' (SimplifiedLayerNormalization): input 'scale' has element type f16: expected X's (f32), as onnxruntime's CPU kernel
func.func @f(%x: tensor<2x4xf32>, %s: tensor<4xf16>) -> !onnx.unknown {
  %0 = "onnx.simplified_layer_normalization"(%x, %s) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, stash_type = 1 : si64} : (tensor<2x4xf32>, tensor<4xf16>) -> !onnx.unknown loc("sln_type")
  return %0 : !onnx.unknown
}
