// RUN: %opt %s --o3-int8-conv=target=znver4 | FileCheck %s
// Stride-2 direct int8 convs (passes/optimize/conv_q8.py, SPLIT_SHUFFLES):
// a 3x3/2 conv's padded input words [1, 1, 44, 42] split into 2x2 stride
// phases [1, 4, 22, 21] by reads of 32 words and even / odd
// vector.shuffles (the row's last 5 words of each phase out of bounds),
// and a 1x1/2 conv's 40-byte input rows subsampled to 20 bytes by one
// 64-byte read (masked) and one even shuffle per output row.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func.func @qconv_s2
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 22, 2, 42] : tensor<1x44x42xi32> into tensor<1x22x2x42xi32>
// CHECK: scf.for %{{.*}} = %c0 to %c22 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x4x22x21xi32>)
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x22x2x42xi32>, vector<32xi32>
// CHECK: vector.shuffle %[[V:.*]], %[[V]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
// CHECK: vector.shuffle %[[V]], %[[V]] [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31]
// CHECK: vector.transfer_write {{.*}}[%c0, %c0, %{{.*}}, %c0] {in_bounds = [true]} : vector<16xi32>, tensor<1x4x22x21xi32>
// CHECK: vector.transfer_write {{.*}}[%c0, %c1, %{{.*}}, %c0] {in_bounds = [true]} : vector<16xi32>, tensor<1x4x22x21xi32>
// CHECK: vector.transfer_read {{.*}}[%c0, %{{.*}}, %c1, %c32], %{{.*}} : tensor<1x22x2x42xi32>, vector<32xi32>
// CHECK: vector.transfer_write {{.*}}[%c0, %c3, %{{.*}}, %c16] : vector<16xi32>, tensor<1x4x22x21xi32>
// CHECK-NOT: linalg.generic {{.*}} outs({{.*}} : tensor<1x1x2x2x22x21xi32>)
func.func @qconv_s2(%x: tensor<1x4x40x40xi8>) -> tensor<1x8x20x20xi32> {
  %w = arith.constant dense<3> : tensor<8x4x3x3xi8>
  %zx = arith.constant dense<-128> : tensor<i8>
  %e = tensor.empty() : tensor<1x4x40x40xi32>
  %x32 = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zx : tensor<1x4x40x40xi8>, tensor<i8>) outs(%e : tensor<1x4x40x40xi32>) {
  ^bb0(%a: i8, %z: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    linalg.yield %2 : i32
  } -> tensor<1x4x40x40xi32>
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x32 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c0 : i32
  } : tensor<1x4x40x40xi32> to tensor<1x4x42x42xi32>
  %ew = tensor.empty() : tensor<8x4x3x3xi32>
  %w32 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<8x4x3x3xi8>) outs(%ew : tensor<8x4x3x3xi32>) {
  ^bb0(%a: i8, %o: i32):
    %0 = arith.extsi %a : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<8x4x3x3xi32>
  %eo = tensor.empty() : tensor<1x8x20x20xi32>
  %fill = linalg.fill ins(%c0 : i32) outs(%eo : tensor<1x8x20x20xi32>) -> tensor<1x8x20x20xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w32 : tensor<1x4x42x42xi32>, tensor<8x4x3x3xi32>) outs(%fill : tensor<1x8x20x20xi32>) -> tensor<1x8x20x20xi32>
  return %y : tensor<1x8x20x20xi32>
}

// CHECK-LABEL: func.func @qconv_1x1_s2
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: tensor.collapse_shape %{{.*}} [[0, 1], [2], [3]] : tensor<1x4x40x40xi8> into tensor<4x40x40xi8>
// CHECK: vector.transfer_read {{.*}} : tensor<4x40x40xi8>, vector<64xi8>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, {{.*}}, 60, 62] : vector<64xi8>, vector<64xi8>
// CHECK: vector.transfer_write {{.*}} : vector<32xi8>, tensor<4x20x20xi8>
// CHECK: output_shape [1, 4, 20, 20] : tensor<4x20x20xi8> into tensor<1x4x20x20xi8>
func.func @qconv_1x1_s2(%x: tensor<1x4x40x40xi8>) -> tensor<1x8x20x20xi32> {
  %w = arith.constant dense<3> : tensor<8x4x1x1xi8>
  %zx = arith.constant dense<-128> : tensor<i8>
  %e = tensor.empty() : tensor<1x4x40x40xi32>
  %x32 = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %zx : tensor<1x4x40x40xi8>, tensor<i8>) outs(%e : tensor<1x4x40x40xi32>) {
  ^bb0(%a: i8, %z: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    linalg.yield %2 : i32
  } -> tensor<1x4x40x40xi32>
  %c0 = arith.constant 0 : i32
  %p = tensor.pad %x32 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %c0 : i32
  } : tensor<1x4x40x40xi32> to tensor<1x4x42x42xi32>
  %ew = tensor.empty() : tensor<8x4x1x1xi32>
  %w32 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<8x4x1x1xi8>) outs(%ew : tensor<8x4x1x1xi32>) {
  ^bb0(%a: i8, %o: i32):
    %0 = arith.extsi %a : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<8x4x1x1xi32>
  %eo = tensor.empty() : tensor<1x8x20x20xi32>
  %fill = linalg.fill ins(%c0 : i32) outs(%eo : tensor<1x8x20x20xi32>) -> tensor<1x8x20x20xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x32, %w32 : tensor<1x4x40x40xi32>, tensor<8x4x1x1xi32>) outs(%fill : tensor<1x8x20x20xi32>) -> tensor<1x8x20x20xi32>
  return %y : tensor<1x8x20x20xi32>
}
