// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'd1' (DeformConv): input 'offset' dim 1 is 16: expected offset_group * prod(kernel) * 2 = 18
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %o: tensor<1x16x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.deform_conv"(%x, %w, %o) {group = 1 : si64, offset_group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<1x16x4x4xf32>) -> !onnx.unknown loc("d1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd2' (DeformConv): input 'mask' dim 3 is 5: expected the output size 4
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %o: tensor<1x18x4x4xf32>, %m: tensor<1x9x4x5xf32>) -> !onnx.unknown {
  %0 = "onnx.deform_conv"(%x, %w, %o, %m) {group = 1 : si64, offset_group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<1x18x4x4xf32>, tensor<1x9x4x5xf32>) -> !onnx.unknown loc("d2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd3' (DeformConv): input channels C = 2 is not divisible by offset_group 4
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %o: tensor<1x72x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.deform_conv"(%x, %w, %o) {group = 1 : si64, offset_group = 4 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<1x72x4x4xf32>) -> !onnx.unknown loc("d3")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd4' (DeformConv): attribute 'offset_group' = 0: expected >= 1
func.func @f(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %o: tensor<1x18x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.deform_conv"(%x, %w, %o) {group = 1 : si64, offset_group = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<1x18x4x4xf32>) -> !onnx.unknown loc("d4")
  return %0 : !onnx.unknown
}
