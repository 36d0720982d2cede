// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

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

// -----

// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, -d3 + 2)>

// CHECK-LABEL: func.func @conv_t_1d
// CHECK: tensor.insert_slice
// CHECK: [1, 1, 2]
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: onnx.
func.func @conv_t_1d(%arg0: tensor<1x2x5xf32> {onnx.name = "x"}, %arg1: tensor<2x3x3xf32> {onnx.name = "w"}) -> (tensor<1x3x10xf32> {onnx.name = "y"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.conv_transpose"(%arg0, %arg1) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<1x2x5xf32>, tensor<2x3x3xf32>) -> tensor<1x3x10xf32>
    return %0 : tensor<1x3x10xf32>
  }

// -----

// The grouped 1-D conv is the 2-D conv of the [N, C, 1, L] view (so -O3
// runs it on the 2-D kernels), its result viewed back.
// CHECK-LABEL: func.func @conv1d_grouped
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 1, 6]
// CHECK: tensor.expand_shape %arg1 {{\[}}[0], [1], [2, 3]] output_shape [4, 2, 1, 3]
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} {{.*}} -> tensor<1x2x2x1x4xf32>
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x1x4xf32>
// CHECK: tensor.collapse_shape {{.*}} into tensor<1x4x4xf32>
// CHECK-NOT: onnx.
func.func @conv1d_grouped(%arg0: tensor<1x4x6xf32> {onnx.name = "x"}, %arg1: tensor<4x2x3xf32> {onnx.name = "w"}) -> (tensor<1x4x4xf32> {onnx.name = "y"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.conv"(%arg0, %arg1) {auto_pad = "NOTSET", group = 2 : si64} : (tensor<1x4x6xf32>, tensor<4x2x3xf32>) -> tensor<1x4x4xf32>
    return %0 : tensor<1x4x4xf32>
  }

// -----

// com.microsoft.NhwcConv, 2-D, one group: the channels-last input padded on
// H, W only, linalg.conv_2d_nhwc_fhwc with the constant filter relaid out
// [F, C, KH, KW] -> [F, KH, KW, C] at compile time (no transpose left), the
// bias added on the last dim.
// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @nhwc_conv
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[BLOB:nhwc_filter.*]]> : tensor<1x1x2x2xf32>
// CHECK: %[[XP:.*]] = tensor.pad %arg0 low[0, 1, 0, 0] high[0, 2, 1, 0]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nhwc_fhwc {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XP]], %[[W]] : tensor<?x9x8x2xf32>, tensor<1x1x2x2xf32>) outs(%{{.*}} : tensor<?x5x3x1xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[LAST]], #[[FULL]]]{{.*}} ins(%[[Y]], %arg1
// CHECK: arith.addf
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @nhwc_conv(%x: tensor<?x6x7x2xf32>, %b: tensor<1xf32>) -> tensor<?x5x3x1xf32> {
  %w = "onnx.constant"() {value = dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> : tensor<1x2x1x2xf32>} : () -> tensor<1x2x1x2xf32>
  %0 = "com_microsoft.nhwc_conv"(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 2>} : (tensor<?x6x7x2xf32>, tensor<1x2x1x2xf32>, tensor<1xf32>) -> tensor<?x5x3x1xf32>
  return %0 : tensor<?x5x3x1xf32>
}

// a filter that is not a constant: relaid out by a linalg.transpose
// CHECK-LABEL: func.func @nhwc_conv_weight_input
// CHECK: %[[W:.*]] = linalg.transpose ins(%arg1 : tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<4x3x3x3xf32>) permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_fhwc {{.*}} ins(%arg0, %[[W]] : tensor<1x5x5x3xf32>, tensor<4x3x3x3xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>)
// CHECK-NEXT: return
func.func @nhwc_conv_weight_input(%x: tensor<1x5x5x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x3x4xf32> {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x5x5x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// groups (and 1-D / 3-D): Conv's lowering of the input transposed to
// channels-first, its result transposed back
// CHECK-LABEL: func.func @nhwc_conv_grouped
// CHECK: linalg.transpose ins(%arg0 : tensor<1x8x8x4xf32>) outs(%{{.*}} : tensor<1x4x8x8xf32>) permutation = [0, 3, 1, 2]
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x6x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x6xf32>) permutation = [0, 2, 3, 1]
func.func @nhwc_conv_grouped(%x: tensor<1x8x8x4xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = "com_microsoft.nhwc_conv"(%x, %w) {auto_pad = "NOTSET", group = 2 : si64} : (tensor<1x8x8x4xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// the filter [F, KH, KW, C] = [[[[1, 3], [2, 4]]]]
// CHECK: [[BLOB]]: "0x040000000000803F000040400000004000008040"
