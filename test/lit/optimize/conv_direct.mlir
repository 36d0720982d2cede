// RUN: %opt %s --o3-conv-direct=target=x86-64-v4 | FileCheck %s
// RUN: %opt %s --o3-conv-direct=target=x86-64-v4,threads=1 | FileCheck %s --check-prefix=THREADS

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>

// A 3 -> 16 3x3 stride-2 stem conv (x86-64-v4: 16 lanes, tiles of 8 filters
// x 3 vectors), its zero pad, bias add and ReLU fused: the kernel reads the
// unpadded 34x38 image. 19 output columns: one static group of 2 vectors,
// the second storing 3 lanes. Per output row the kernel rows inside the
// image are a loop [khlo, khhi) (the top pad row skipped at oh = 0). Each
// output row first copies its input rows into a phase buffer
// [C, KH, stride, 48] (de-interleaved by stride phase: phase 0 holds columns
// 2m - 1, whose lane 0 is the left pad, a shuffle with a zero vector: 29
// values read from column 1, kept every other lane); every tap then reads
// the buffer with one contiguous vector. Weights repacked to
// [2, 3, 3, 3, 8]; the channel loop carries the 16 accumulators.
// CHECK-LABEL: func.func @stem
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: linalg.transpose ins({{.*}} : tensor<2x8x3x3x3xf32>) outs({{.*}} : tensor<2x3x3x3x8xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK: scf.for {{.*}} -> (tensor<1x16x17x19xf32>)
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.empty() : tensor<3x3x2x48xf32>
// CHECK: vector.transfer_read %arg0[{{.*}}, %c1], %{{.*}} {in_bounds = [true]} : tensor<1x3x34x38xf32>, vector<29xf32>
// CHECK: vector.shuffle {{.*}} [29, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28] : vector<29xf32>, vector<29xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<3x3x2x48xf32>
// CHECK: scf.for {{.*}} -> (tensor<1x16x1x19xf32>)
// CHECK-COUNT-8: tensor.extract %{{.*}} : tensor<16xf32>
// CHECK: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NEXT: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK: vector.transfer_read {{.*}} : tensor<3x3x2x48xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.extract_strided_slice {{.*}} {offsets = [0], sizes = [3], strides = [1]} : vector<16xf32> to vector<3xf32>
// CHECK: vector.transfer_write {{.*}} : vector<3xf32>, tensor<1x16x1x19xf32>
// CHECK-NOT: linalg.generic
// THREADS-LABEL: func.func @stem
// THREADS-NOT: scf.forall
// THREADS-LABEL: func.func @stem_big
func.func @stem(%x: tensor<1x3x34x38xf32>, %b: tensor<16xf32>) -> tensor<1x16x17x19xf32> {
  // a constant: the pad is skipped only for finite weights (conv_direct.finite_constant)
  %w = arith.constant dense<5.000000e-01> : tensor<16x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x34x38xf32> to tensor<1x3x36x40xf32>
  %e = tensor.empty() : tensor<1x16x17x19xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x17x19xf32>) -> tensor<1x16x17x19xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x3x36x40xf32>, tensor<16x3x3x3xf32>) outs(%z : tensor<1x16x17x19xf32>) -> tensor<1x16x17x19xf32>
  %e2 = tensor.empty() : tensor<1x16x17x19xf32>
  %a = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x16x17x19xf32>, tensor<16xf32>) outs(%e2 : tensor<1x16x17x19xf32>) {
  ^bb0(%in: f32, %bc: f32, %o: f32):
    %s = arith.addf %in, %bc : f32
    linalg.yield %s : f32
  } -> tensor<1x16x17x19xf32>
  %e3 = tensor.empty() : tensor<1x16x17x19xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%a : tensor<1x16x17x19xf32>) outs(%e3 : tensor<1x16x17x19xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x16x17x19xf32>
  return %r : tensor<1x16x17x19xf32>
}

// 4.1M multiply-adds (>= 2^20): with threads the 98 output rows are an
// scf.forall; stride 1, each input row read by 3 output rows
// (conv_direct.row_reuse): the image is copied once into a phase plane
// [3, 100, 1, 128] (16 values per vector; with threads a forall over the 3
// channels), the taps read 16 values of it at the kernel row's image row,
// the first 6 vectors of a row in a loop of 2 groups of 3, the 7th (2 lanes
// kept) static.
// CHECK-LABEL: func.func @stem_big
// CHECK-NOT: scf.forall
// CHECK: tensor.empty() : tensor<3x100x1x128xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<1x3x100x100xf32>, vector<16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<1x16x1x98xf32>)
// CHECK: vector.transfer_read {{.*}} : tensor<3x100x1x128xf32>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<2xf32>, tensor<1x16x1x98xf32>
// THREADS: scf.forall (%{{.*}}) in (3)
// THREADS: scf.forall (%{{.*}}) in (98)
// THREADS: tensor.parallel_insert_slice
func.func @stem_big(%x: tensor<1x3x100x100xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x98x98xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x98x98xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x98x98xf32>) -> tensor<1x16x98x98xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x3x100x100xf32>, tensor<16x3x3x3xf32>) outs(%z : tensor<1x16x98x98xf32>) -> tensor<1x16x98x98xf32>
  return %c : tensor<1x16x98x98xf32>
}
