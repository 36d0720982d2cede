// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'conv_ks' (Conv): attribute 'kernel_shape' has 1 values, expected 2 (one per spatial axis)
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64, kernel_shape = array<i64: 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown loc("conv_ks")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_pads' (Conv): attribute 'pads' has 2 values, expected 4 (begin and end for each of 2 spatial axes)
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv_v11"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown loc("conv_pads")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_group' (Conv): input channels C = 4 is not divisible by group 3
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 3 : si64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> !onnx.unknown loc("conv_group")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_wc' (Conv): weight 'W' dim 1: expected dim 1 = C/group = 4/2 = 2, got 3
func.func @f(%x: tensor<?x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64} : (tensor<?x4x8x8xf32>, tensor<8x3x3x3xf32>) -> !onnx.unknown loc("conv_wc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_rank' (Conv): weight 'W' has rank 3 [4x3x3] but input 'X' has rank 4 [1x3x8x8]: expected equal ranks
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> !onnx.unknown loc("conv_rank")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_bias' (Conv): bias 'B' has shape [5]: expected 4 elements (output channels), got 5
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> !onnx.unknown loc("conv_bias")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'conv_autopad' (Conv): attribute 'pads' = [1, 1, 1, 1] cannot be used with auto_pad = 'SAME_UPPER' (expected auto_pad = 'NOTSET')
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "SAME_UPPER", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown loc("conv_autopad")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'convt_c' (ConvTranspose): weight 'W' dim 0: expected dim 0 = input channels 4, got 3
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv_transpose"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> !onnx.unknown loc("convt_c")
  return %0 : !onnx.unknown
}

// -----
// NhwcConv's channels are X's last dim
// CHECK: error: node 'nhwc_channels' (NhwcConv): weight 'W' dim 1: expected dim 1 = C/group = 8/1 = 8, got 3
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown loc("nhwc_channels")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nhwc_rank' (NhwcConv): input 'X' has shape [8x3]: expected rank >= 3 (N x D1 x ... x Dn x C), got rank 2
func.func @f(%x: tensor<8x3xf32>, %w: tensor<4x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<8x3xf32>, tensor<4x3x3xf32>) -> !onnx.unknown loc("nhwc_rank")
  return %0 : !onnx.unknown
}
