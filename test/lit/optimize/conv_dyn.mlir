// RUN: %opt %s --o3-conv-dyn=target=x86-64-v4 | FileCheck %s
// RUN: %opt %s --o3-conv-dyn=target=x86-64-v4,threads=1 | FileCheck %s --check-prefix=THR

// A 3x3 stride-2 conv over dynamic N, H, W with a fused bias (x86-64-v4
// blocks: mb 8, nb 32, kb 8): per image, im2col into [40, mp] (36 rows padded
// to whole k blocks, OH*OW columns padded to whole 32-column blocks at run
// time, the padding zeroed), each output row copied per tap as whole chunks
// of 32 (63 contiguous values, every second kept) then one masked chunk; the
// packed contraction over a run-time number of column blocks accumulates into
// the broadcast bias; each channel is copied out as one row of OH*OW values
// into the output viewed [N, F, OH*OW] (tensor.reshape'd back).
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: %[[OUT:.*]] = tensor.collapse_shape {{.*}} [[0], [1], [2, 3]] : tensor<?x8x?x?xf32> into tensor<?x8x?xf32>
// CHECK: %[[M:.*]] = tensor.dim %[[OUT]], %c2
// CHECK: scf.for {{.*}} -> (tensor<?x8x?xf32>)
// CHECK: %[[NO:.*]] = arith.ceildivui %[[M]], %c32
// CHECK: %[[MP:.*]] = arith.muli %[[NO]], %c32
// CHECK: tensor.empty(%[[MP]]) : tensor<40x?xf32>
// CHECK: linalg.fill {{.*}} -> tensor<4x?xf32>
// CHECK: linalg.fill {{.*}} -> tensor<36x?xf32>
// CHECK: scf.for {{.*}} step %c32
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x4x?x?xf32>, vector<63xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 4,
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, tensor<9x?xf32>
// CHECK: %[[MASK:.*]] = vector.create_mask %{{.*}} : vector<32xi1>
// CHECK: %[[RMASK:.*]] = vector.create_mask %{{.*}} : vector<63xi1>
// CHECK: vector.transfer_read {{.*}}, %[[RMASK]] {in_bounds = [true]}
// CHECK: vector.transfer_write {{.*}}, %[[MASK]] {in_bounds = [true]} : vector<32xf32>, tensor<9x?xf32>
// CHECK: tensor.expand_shape {{.*}} output_shape [5, 8, %[[NO]], 32] : tensor<40x?xf32> into tensor<5x8x?x32xf32>
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<8xf32>) outs({{.*}} : tensor<8x?xf32>)
// CHECK: linalg.generic {{.*}} ins({{.*}} : tensor<1x8x5x8xf32>, tensor<5x8x?x32xf32>) outs({{.*}} : tensor<1x8x?x32xf32>) attrs = {onnx_mlir_py.packed_contraction}
// CHECK: scf.for {{.*}} -> (tensor<1x8x?xf32>)
// CHECK: vector.transfer_write {{.*}} : vector<32xf32>, tensor<1x8x?xf32>
// CHECK: vector.transfer_write {{.*}}, %{{.*}} {in_bounds = [true]} : vector<32xf32>, tensor<1x8x?xf32>
// CHECK: tensor.insert_slice {{.*}} into %{{.*}}[%{{.*}}, 0, 0] [1, 8, %{{.*}}]
// CHECK: tensor.reshape {{.*}} -> tensor<?x8x?x?xf32>
func.func @conv(%x: tensor<?x4x?x?xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>, %e: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<?x4x?x?xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<?x8x?x?xf32>, tensor<8xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%i: f32, %bb: f32, %o: f32):
    %s = arith.addf %i, %bb : f32
    linalg.yield %s : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}

// A 1x1 stride-1 conv reading a squeeze-excitation scale (x * s, s [N, C, 1, 1]):
// x is passed viewed [N, C, H*W], each channel one row copy multiplied by its
// scale (the Mul is gone). It runs in strips of at most 256 columns (8
// blocks: the rows [16, S] and accumulators [8, S] well within a quarter of
// v4's 1 MB L2), at least min(4, blocks) of them, the blocks spread evenly:
// per strip the copy-in of its columns (whole 32-column chunks, each masked
// to the map: zeros to the block's end) into a static [16, 256] buffer, the
// contraction over the strip's blocks, the copy out of its columns. With
// threads the strips are the one parallel loop.
// CHECK-LABEL: func.func @scaled_1x1
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: tensor.collapse_shape %arg0 {{.*}} into tensor<?x16x?xf32>
// CHECK: %[[M1:.*]] = tensor.dim %{{.*}}, %c2 : tensor<?x8x?xf32>
// CHECK: %[[NB:.*]] = arith.ceildivui %[[M1]], %c32
// CHECK: %[[NS0:.*]] = arith.ceildivui %[[M1]], %c256
// CHECK: %[[FEW:.*]] = arith.minui %[[NB]], %c4
// CHECK: %[[WANT:.*]] = arith.maxui %[[NS0]], %[[FEW]]
// CHECK: %[[BPER:.*]] = arith.ceildivui %[[NB]], %[[WANT]]
// CHECK: %[[NS:.*]] = arith.ceildivui %[[NB]], %[[BPER]]
// CHECK: scf.for %{{.*}} = %c0 to %[[NS]] step %c1
// CHECK: tensor.empty() : tensor<16x256xf32>
// CHECK: tensor.extract %{{.*}} : tensor<1x16x1x1xf32>
// CHECK: vector.create_mask %{{.*}} : vector<32xi1>
// CHECK: vector.transfer_read {{.*}} : tensor<1x16x?xf32>, vector<32xf32>
// CHECK-NEXT: arith.mulf {{.*}} : vector<32xf32>
// CHECK-NEXT: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<32xf32>, tensor<16x256xf32>
// CHECK: tensor.extract_slice {{.*}}[0, 0] [16, %{{.*}}] [1, 1] : tensor<16x256xf32> to tensor<16x?xf32>
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<1x8x?x32xf32>) attrs = {onnx_mlir_py.packed_contraction}
// CHECK: tensor.insert_slice {{.*}} [1, 8, %{{.*}}] [1, 1, 1] : tensor<1x8x?xf32> into tensor<1x8x?xf32>
// CHECK-NOT: affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// CHECK: tensor.reshape {{.*}} -> tensor<?x8x?x?xf32>
// THR-LABEL: func.func @scaled_1x1
// THR: scf.forall (%{{.*}}) in (%{{.*}}) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<1x8x?xf32>)
// THR-NOT: scf.forall (
// THR: tensor.parallel_insert_slice {{.*}} [1, 8, %{{.*}}] [1, 1, 1] : tensor<1x8x?xf32> into tensor<1x8x?xf32>
// THR: tensor.reshape
func.func @scaled_1x1(%x: tensor<?x16x?x?xf32>, %g: tensor<?x16x1x1xf32>, %w: tensor<8x16x1x1xf32>,
                      %e: tensor<?x8x?x?xf32>, %e1: tensor<?x16x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %g : tensor<?x16x?x?xf32>, tensor<?x16x1x1xf32>) outs(%e1 : tensor<?x16x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x16x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%s, %w : tensor<?x16x?x?xf32>, tensor<8x16x1x1xf32>) outs(%z : tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %c : tensor<?x8x?x?xf32>
}

// Static H/W stay with conv.py (o3-conv-to-matmul); an init that is not a
// fill of 0.0 is not taken either.
// CHECK-LABEL: func.func @not_taken
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<?x8x7x7xf32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x8x?x?xf32>
func.func @not_taken(%x: tensor<?x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %e: tensor<?x8x7x7xf32>,
                     %x2: tensor<1x4x?x?xf32>, %e2: tensor<1x8x?x?xf32>) -> (tensor<?x8x7x7xf32>, tensor<1x8x?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x7x7xf32>) -> tensor<?x8x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<?x4x9x9xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<?x8x7x7xf32>) -> tensor<?x8x7x7xf32>
  %f = linalg.fill ins(%one : f32) outs(%e2 : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x2, %w : tensor<1x4x?x?xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %c, %c2 : tensor<?x8x7x7xf32>, tensor<1x8x?x?xf32>
}
