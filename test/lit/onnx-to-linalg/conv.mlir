// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "onnx.conv_v11"(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : si64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @depthwise
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2], [3]] : tensor<3x1x3x3xf32> into tensor<3x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @depthwise(%x: tensor<1x3x8x8xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32> {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 3 : si64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  return %0 : tensor<1x3x6x6xf32>
}

// CHECK-LABEL: func.func @grouped
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}
