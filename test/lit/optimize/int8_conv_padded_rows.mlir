// RUN: %opt %s --o3-int8-conv=target=znver4 | FileCheck %s
// RUN: %opt %s --o3-int8-conv=target=znver4 | FileCheck %s --check-prefix=STORE
// A direct int8 conv whose 40-pixel rows would fill 40 of 48 lanes of their
// row blocks is computed over its padded rows (passes/optimize/conv_q8.py,
// padded_rows): the channel-blocked input plane [1, 1, 1, 43, 41] (a row's
// right pad is the next row's left pad) as one row of 1763 i32 words, taps
// (a, b) a*41 + b words apart, 40 x 41 positions in 8 x 48 tiles and a last
// 8 x 16, each vector stored with two masked writes into the output viewed
// as one row of 1600 pixels.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func.func @qconv_rows
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x1x1x43x41xi32> into tensor<1x1x1x1763xi32>
// CHECK: scf.for %{{.*}} = %c0 to %c1632 step %c48
// CHECK: vector.create_mask
// CHECK: vector.transfer_write {{.*}} : vector<16xi32>, tensor<1x8x1x1600xi32>
// CHECK: output_shape [1, 8, 40, 40] : tensor<1x8x1600xi32> into tensor<1x8x40x40xi32>
// STORE-COUNT-64: vector.transfer_write {{.*}}], %{{[0-9a-z_]+}} : vector<16xi32>, tensor<1x8x1x1600xi32>
// STORE-NOT: vector.transfer_write
func.func @qconv_rows(%x: tensor<1x4x40x40xi8>) -> tensor<1x8x40x40xi32> {
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
  %eo = tensor.empty() : tensor<1x8x40x40xi32>
  %fill = linalg.fill ins(%c0 : i32) outs(%eo : tensor<1x8x40x40xi32>) -> tensor<1x8x40x40xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w32 : tensor<1x4x42x42xi32>, tensor<8x4x3x3xi32>) outs(%fill : tensor<1x8x40x40xi32>) -> tensor<1x8x40x40xi32>
  return %y : tensor<1x8x40x40xi32>
}
