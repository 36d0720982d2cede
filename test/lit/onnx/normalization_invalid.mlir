// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'bn_c' (BatchNormalization): input 'scale' has shape [4]: expected 3 elements (C (channels of X)), got 4
func.func @f(%x: tensor<2x3x4x4xf32>, %s: tensor<4xf32>, %v: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.batch_normalization"(%x, %s, %v, %v, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 0 : si64} : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> !onnx.unknown loc("bn_c")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'bn_train' (BatchNormalization): expected 3 output(s) with training_mode=1, got 1
func.func @f(%x: tensor<2x3x4x4xf32>, %v: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.batch_normalization"(%x, %v, %v, %v, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 1 : si64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> !onnx.unknown loc("bn_train")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'in_rank' (InstanceNormalization): input 'scale' has shape [3x1]: expected rank 1, got rank 2
func.func @f(%x: tensor<2x3x4xf32>, %s: tensor<3x1xf32>, %b: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.instance_normalization"(%x, %s, %b) {epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<3x1xf32>, tensor<3xf32>) -> !onnx.unknown loc("in_rank")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ln_axis' (LayerNormalization): attribute 'axis' = 3: expected a value in [-3, 2] for input 'X' of rank 3
func.func @f(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.layer_normalization"(%x, %s) {axis = 3 : si64, epsilon = 1.0e-05 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, stash_type = 1 : si64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> !onnx.unknown loc("ln_axis")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ln_scale' (LayerNormalization): input 'Scale' has shape [3]: expected it to broadcast to X's normalized shape [4] (axis=2)
func.func @f(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.layer_normalization"(%x, %s) {axis = -1 : si64, epsilon = 1.0e-05 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, stash_type = 1 : si64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> !onnx.unknown loc("ln_scale")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gn_groups' (GroupNormalization): channels C = 6 are not divisible by num_groups = 4
func.func @f(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>) -> !onnx.unknown {
  %0 = "onnx.group_normalization"(%x, %s, %s) {epsilon = 1.0e-05 : f32, num_groups = 4 : si64, stash_type = 1 : si64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> !onnx.unknown loc("gn_groups")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gn18' (GroupNormalization): input 'scale' has shape [6]: expected 3 elements (num_groups), got 6
func.func @f(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>) -> !onnx.unknown {
  %0 = "onnx.group_normalization_v18"(%x, %s, %s) {epsilon = 1.0e-05 : f32, num_groups = 3 : si64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> !onnx.unknown loc("gn18")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'lp_p' (LpNormalization): attribute 'p' = 3: expected 1 or 2
func.func @f(%x: tensor<2x3xf32>) -> !onnx.unknown {
  %0 = "onnx.lp_normalization"(%x) {axis = -1 : si64, p = 3 : si64} : (tensor<2x3xf32>) -> !onnx.unknown loc("lp_p")
  return %0 : !onnx.unknown
}

