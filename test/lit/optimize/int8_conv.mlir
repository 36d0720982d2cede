// RUN: %opt %s --o3-int8-conv=target=znver4 | FileCheck %s
// RUN: %opt %s --o3-int8-conv=target=x86-64-v4 | FileCheck %s --check-prefix=NOVNNI
// An i32 conv of a shifted u8 input (zero padded after the shift) and a
// widened constant s8 filter (QLinearConv's lowering) becomes an 8-bit
// im2col (NHWC, padded with the zero point) and an i32 matmul that the int8
// matmul kernel takes, its [pixels, filters] result transposed back to NCHW
// in 16x16 register blocks (passes/optimize/conv_q8.py).

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func.func @qconv
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x4x4x4xi8>) outs(%{{.*}} : tensor<1x4x4x4xi8>) permutation = [0, 2, 3, 1]
// CHECK: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %{{.*}} : i8
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x6x6x4xi8>) outs(%{{.*}} : tensor<1x4x4x3x3x4xi8>)
// CHECK: tensor.collapse_shape {{.*}} into tensor<16x36xi8>
// CHECK: linalg.matmul {{.*}} : tensor<16x36xi32>, tensor<36x16xi32>)
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xi32> to vector<16x16xi32>
// CHECK: output_shape [1, 16, 4, 4] : tensor<16x16xi32> into tensor<1x16x4x4xi32>
// NOVNNI-LABEL: func.func @qconv
// NOVNNI: linalg.conv_2d_nchw_fchw
func.func @qconv(%x: tensor<1x4x4x4xi8>) -> tensor<1x16x4x4xi32> {
  %w = arith.constant dense<3> : tensor<16x4x3x3xi8>
  %zx = arith.constant dense<-128> : tensor<i8>
  %e = tensor.empty() : tensor<1x4x4x4xi32>
  %x32 = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zx : tensor<1x4x4x4xi8>, tensor<i8>) outs(%e : tensor<1x4x4x4xi32>) {
  ^bb0(%a: i8, %z: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    linalg.yield %2 : i32
  } -> tensor<1x4x4x4xi32>
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x32 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c0 : i32
  } : tensor<1x4x4x4xi32> to tensor<1x4x6x6xi32>
  %ew = tensor.empty() : tensor<16x4x3x3xi32>
  %w32 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<16x4x3x3xi8>) outs(%ew : tensor<16x4x3x3xi32>) {
  ^bb0(%a: i8, %o: i32):
    %0 = arith.extsi %a : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<16x4x3x3xi32>
  %eo = tensor.empty() : tensor<1x16x4x4xi32>
  %fill = linalg.fill ins(%c0 : i32) outs(%eo : tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w32 : tensor<1x4x6x6xi32>, tensor<16x4x3x3xi32>) outs(%fill : tensor<1x16x4x4xi32>) -> tensor<1x16x4x4xi32>
  return %y : tensor<1x16x4x4xi32>
}

// 64 channels: the input goes to NHWC as words of 4 channels transposed in
// 16x16 blocks (conv_q8.WORD_NHWC): 25 pixels, one whole block and a block
// of 9, each row of 16 words written as one pixel's 64 bytes.
// CHECK-LABEL: func.func @qconv_words
// CHECK-NOT: linalg.transpose
// CHECK: arith.shli
// CHECK: tensor.collapse_shape {{.*}} into tensor<16x25xi32>
// CHECK: vector.transfer_read {{.*}} : tensor<16x25xi32>, vector<16x16xi32>
// CHECK: vector.bitcast {{.*}} : vector<16x16xi32> to vector<16x64xi8>
// CHECK: vector.transfer_write {{.*}} : vector<16x64xi8>, tensor<25x64xi8>
// CHECK: vector.transfer_read {{.*}} : tensor<16x25xi32>, vector<16x9xi32>
// CHECK: vector.bitcast {{.*}} : vector<9x16xi32> to vector<9x64xi8>
// CHECK: tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.matmul {{.*}} : tensor<25x576xi32>, tensor<576x16xi32>)
func.func @qconv_words(%x: tensor<1x64x5x5xi8>) -> tensor<1x16x5x5xi32> {
  %w = arith.constant dense<3> : tensor<16x64x3x3xi8>
  %zx = arith.constant dense<-128> : tensor<i8>
  %e = tensor.empty() : tensor<1x64x5x5xi32>
  %x32 = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zx : tensor<1x64x5x5xi8>, tensor<i8>) outs(%e : tensor<1x64x5x5xi32>) {
  ^bb0(%a: i8, %z: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    linalg.yield %2 : i32
  } -> tensor<1x64x5x5xi32>
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x32 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c0 : i32
  } : tensor<1x64x5x5xi32> to tensor<1x64x7x7xi32>
  %ew = tensor.empty() : tensor<16x64x3x3xi32>
  %w32 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<16x64x3x3xi8>) outs(%ew : tensor<16x64x3x3xi32>) {
  ^bb0(%a: i8, %o: i32):
    %0 = arith.extsi %a : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<16x64x3x3xi32>
  %eo = tensor.empty() : tensor<1x16x5x5xi32>
  %fill = linalg.fill ins(%c0 : i32) outs(%eo : tensor<1x16x5x5xi32>) -> tensor<1x16x5x5xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w32 : tensor<1x64x7x7xi32>, tensor<16x64x3x3xi32>) outs(%fill : tensor<1x16x5x5xi32>) -> tensor<1x16x5x5xi32>
  return %y : tensor<1x16x5x5xi32>
}
