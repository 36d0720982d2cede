// RUN: %opt %s --o3-conv-direct=target=x86-64-v4 | FileCheck %s
// RUN: %opt %s --o3-conv-direct=target=x86-64-v3 | FileCheck %s --check-prefix=AVX2

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>

// A 64 -> 32 3x3 conv over a 6x10 map (conv_direct_pixels.py: the filters in
// the lanes, one panel of 32 = 2 vectors), its zero pad, bias add and ReLU
// fused. Weights repacked to [1, 64, 3, 3, 32]; at stride 1 the taps read
// the image itself (no phase plane), in the output rows' loops over their
// kernel rows inside the image; rows of 10 pixels are a tile of 6 and a last
// tile of 4 (pixel_tile), both static: the taps in the zero pad columns are
// left out (the first tile's pixel 0 has no kw = 0 tap: its kw = 0 taps read
// columns 0..4).
// Per tile the channel and kernel-row loops carry 6 x 2 accumulators, started
// from the bias vectors; each tap reads two weight vectors and broadcasts one
// image value per pixel; the ReLU runs on the accumulators, which are put in
// a [8, 2, 16] vector (the 6 pixels padded to 8), transposed to [32, 8] and
// written into the row as 32 rows masked to 6 lanes; the tile of 4 as [32, 4].
// CHECK-LABEL: func.func @deep
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.transpose ins({{.*}} : tensor<1x32x64x3x3xf32>) outs({{.*}} : tensor<1x64x3x3x32xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK-NOT: tensor<64x6x1x16xf32>
// CHECK: scf.for {{.*}} -> (tensor<1x32x6x10xf32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.collapse_shape {{.*}} : tensor<1x32x1x10xf32> into tensor<32x10xf32>
// CHECK: vector.transfer_read %arg1[%c0]{{.*}} : tensor<32xf32>, vector<16xf32>
// CHECK: vector.transfer_read %arg1[%c16]{{.*}} : tensor<32xf32>, vector<16xf32>
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NEXT: scf.for
// CHECK-COUNT-2: vector.transfer_read {{.*}} : tensor<1x64x3x3x32xf32>, vector<16xf32>
// CHECK: tensor.extract %arg0[%c0, {{.*}}, {{.*}}, %c0] : tensor<1x64x6x10xf32>
// CHECK: vector.broadcast
// CHECK-COUNT-2: vector.fma
// CHECK-NOT: tensor.extract %arg0[%c0, {{.*}}, {{.*}}, %c0] : tensor<1x64x6x10xf32>
// CHECK: tensor.extract %arg0[%c0, {{.*}}, {{.*}}, %c4] : tensor<1x64x6x10xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.shape_cast {{.*}} : vector<8x2x16xf32> to vector<8x32xf32>
// CHECK: vector.transpose {{.*}}, [1, 0] : vector<8x32xf32> to vector<32x8xf32>
// CHECK: vector.constant_mask [6] : vector<8xi1>
// CHECK-COUNT-32: vector.transfer_write {{.*}} : vector<8xf32>, tensor<32x10xf32>
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.transpose {{.*}}, [1, 0] : vector<4x32xf32> to vector<32x4xf32>
// CHECK: vector.transfer_write {{.*}}[%c0, %c6] {{.*}} : vector<32x4xf32>, tensor<32x10xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<32x10xf32> into tensor<1x32x1x10xf32>
// CHECK-NOT: linalg.generic
// AVX2-LABEL: func.func @deep
// AVX2: linalg.conv_2d_nchw_fchw
func.func @deep(%x: tensor<1x64x6x10xf32>, %b: tensor<32xf32>) -> tensor<1x32x6x10xf32> {
  // a constant: the pad is skipped only for finite weights (conv_direct.finite_constant)
  %w = arith.constant dense<5.000000e-01> : tensor<32x64x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x64x6x10xf32> to tensor<1x64x8x12xf32>
  %e = tensor.empty() : tensor<1x32x6x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x6x10xf32>) -> tensor<1x32x6x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x8x12xf32>, tensor<32x64x3x3xf32>) outs(%z : tensor<1x32x6x10xf32>) -> tensor<1x32x6x10xf32>
  %e2 = tensor.empty() : tensor<1x32x6x10xf32>
  %a = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x32x6x10xf32>, tensor<32xf32>) outs(%e2 : tensor<1x32x6x10xf32>) {
  ^bb0(%in: f32, %bc: f32, %o: f32):
    %s = arith.addf %in, %bc : f32
    linalg.yield %s : f32
  } -> tensor<1x32x6x10xf32>
  %e3 = tensor.empty() : tensor<1x32x6x10xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%a : tensor<1x32x6x10xf32>) outs(%e3 : tensor<1x32x6x10xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x32x6x10xf32>
  return %r : tensor<1x32x6x10xf32>
}
