// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @conv_basic
// CHECK: "onnx.conv"{{.*}} -> tensor<1x4x6x6xf32>
func.func @conv_basic(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// Dynamic batch, strides + pads + dilations, older version.
// CHECK-LABEL: func.func @conv_dynamic_batch
// CHECK: "onnx.conv_v11"{{.*}} -> tensor<?x8x4x5xf32>
func.func @conv_dynamic_batch(%x: tensor<?x4x9x9xf32>, %w: tensor<8x2x3x3xf32>) -> !onnx.unknown {
  %0 = "onnx.conv_v11"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64, strides = array<i64: 2, 2>, dilations = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x4x9x9xf32>, tensor<8x2x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// SAME_UPPER: ceil(7 / 2) = 4; SAME_LOWER: ceil(8 / 3) = 3; VALID: (7 - 3) / 2 + 1 = 3.
// CHECK-LABEL: func.func @conv_auto_pad
// CHECK: "onnx.conv"{{.*}} -> tensor<?x4x4x4xf32>
// CHECK: "onnx.conv_v1"{{.*}} -> tensor<1x4x3x3xf32>
// CHECK: "onnx.conv"{{.*}} -> tensor<1x4x3x3xf32>
func.func @conv_auto_pad(%x: tensor<?x3x7x7xf32>, %x2: tensor<1x3x8x8xf32>, %x3: tensor<1x3x7x7xf32>, %w: tensor<4x3x3x3xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "SAME_UPPER", group = 1 : si64, strides = array<i64: 2, 2>} : (tensor<?x3x7x7xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown
  %1 = "onnx.conv_v1"(%x2, %w) {auto_pad = "SAME_LOWER", group = 1 : si64, strides = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown
  %2 = "onnx.conv"(%x3, %w) {auto_pad = "VALID", group = 1 : si64, strides = array<i64: 2, 2>} : (tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// A dynamic spatial dim stays dynamic.
// CHECK-LABEL: func.func @conv_dynamic_spatial
// CHECK: "onnx.conv"{{.*}} -> tensor<1x5x?x6xf32>
func.func @conv_dynamic_spatial(%x: tensor<1x3x?x16xf32>, %w: tensor<5x3x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64, kernel_shape = array<i64: 4, 4>, strides = array<i64: 3, 3>, pads = array<i64: 0, 2, 0, 1>} : (tensor<1x3x?x16xf32>, tensor<5x3x4x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// ConvTranspose: 2 * (5 - 1) + 1 + 3 - 1 - 1 = 10; output channels W[1] * group = 4;
// SAME_UPPER: 5 * 2 = 10; output_shape wins.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: "onnx.conv_transpose"{{.*}} -> tensor<?x4x10x10xf32>
// CHECK: "onnx.conv_transpose_v11"{{.*}} -> tensor<?x4x10x10xf32>
// CHECK: "onnx.conv_transpose_v1"{{.*}} -> tensor<?x4x12x11xf32>
func.func @conv_transpose(%x: tensor<?x4x5x5xf32>, %w: tensor<4x2x3x3xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.conv_transpose"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> !onnx.unknown
  %1 = "onnx.conv_transpose_v11"(%x, %w) {auto_pad = "SAME_UPPER", group = 2 : si64, strides = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> !onnx.unknown
  %2 = "onnx.conv_transpose_v1"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64, strides = array<i64: 2, 2>, output_shape = array<i64: 12, 11>} : (tensor<?x4x5x5xf32>, tensor<4x2x3x3xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// com.microsoft.NhwcConv: channels-last X [N, H, W, C] and Y [N, OH, OW, M],
// W in Conv's layout [M, C/group, kH, kW]
// CHECK-LABEL: func.func @nhwc_conv
// CHECK: "com_microsoft.nhwc_conv"{{.*}} -> tensor<?x5x3x8xf32>
func.func @nhwc_conv(%x: tensor<?x9x9x4xf32>, %w: tensor<8x2x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 0>} : (tensor<?x9x9x4xf32>, tensor<8x2x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// 1-D: [N, L, C]
// CHECK-LABEL: func.func @nhwc_conv_1d
// CHECK: "com_microsoft.nhwc_conv"{{.*}} -> tensor<2x4x6xf32>
func.func @nhwc_conv_1d(%x: tensor<2x6x3xf32>, %w: tensor<6x3x3xf32>) -> !onnx.unknown {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<2x6x3xf32>, tensor<6x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
