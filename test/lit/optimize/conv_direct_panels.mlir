// RUN: %opt %s --o3-conv-direct=target=sapphirerapids | FileCheck %s
// RUN: %opt %s --o3-conv-direct=target=sapphirerapids,threads=1 | FileCheck %s --check-prefix=THREADS
// RUN: %opt %s --o3-conv-direct=target=znver4 | FileCheck %s --check-prefix=ZEN4

// A 256 -> 128 3x3 conv over a 4x6 map, filters in the lanes
// (conv_direct_pixels.py): 1.2 MB of weights, more than half of a Sapphire
// Rapids core's 2 MiB L2, on two FMA pipes (panels_outer): the image's loop
// runs its 4 filter panels outermost and the 4 output rows inside (one loop
// of 16: panel = i / 4, row = i mod 4), each iteration one panel's 32 filters
// of one row; with threads the same 16 iterations are the scf.forall's.
// Zen 4 (one FMA pipe) keeps the rows outermost, each over every panel.
// CHECK-LABEL: func.func @panels
// CHECK: scf.for %[[I:.*]] = %c0 to %c16 step %c1 iter_args({{.*}}) -> (tensor<1x128x4x6xf32>)
// CHECK-NEXT: %[[P:.*]] = arith.divui %[[I]], %c4 : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[I]], %c4 : index
// CHECK-NEXT: %[[F:.*]] = arith.muli %[[P]], %c32 : index
// CHECK-NEXT: tensor.extract_slice %{{.*}}[0, %[[F]], %[[R]], 0] [1, 32, 1, 6] [1, 1, 1, 1] : tensor<1x128x4x6xf32> to tensor<1x32x1x6xf32>
// CHECK-NOT: scf.for {{.*}} -> (tensor<128x6xf32>)
// CHECK: vector.fma
// CHECK: tensor.insert_slice %{{.*}}[0, %[[F]], %[[R]], 0] [1, 32, 1, 6] [1, 1, 1, 1] : tensor<1x32x1x6xf32> into tensor<1x128x4x6xf32>
// THREADS-LABEL: func.func @panels
// THREADS: scf.forall (%[[I:.*]]) in (16)
// THREADS-NEXT: arith.divui %[[I]], %c4 : index
// THREADS-NEXT: arith.remui %[[I]], %c4 : index
// THREADS: tensor.parallel_insert_slice {{.*}} [1, 32, 1, 6] [1, 1, 1, 1] : tensor<1x32x1x6xf32> into tensor<1x128x4x6xf32>
// ZEN4-LABEL: func.func @panels
// ZEN4: scf.for %[[R:.*]] = %c0 to %c4 step %c1 iter_args({{.*}}) -> (tensor<1x128x4x6xf32>)
// ZEN4-NEXT: tensor.extract_slice %{{.*}}[0, 0, %[[R]], 0] [1, 128, 1, 6] [1, 1, 1, 1]
// ZEN4-NOT: arith.divui
// ZEN4: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args({{.*}}) -> (tensor<128x6xf32>)
// ZEN4: tensor.insert_slice %{{.*}}[0, 0, %[[R]], 0] [1, 128, 1, 6] [1, 1, 1, 1] : tensor<1x128x1x6xf32> into tensor<1x128x4x6xf32>
func.func @panels(%x: tensor<1x256x4x6xf32>) -> tensor<1x128x4x6xf32> {
  // a constant: the pad is skipped only for finite weights (conv_direct.finite_constant)
  %w = arith.constant dense<5.000000e-01> : tensor<128x256x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x256x4x6xf32> to tensor<1x256x6x8xf32>
  %e = tensor.empty() : tensor<1x128x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128x4x6xf32>) -> tensor<1x128x4x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x256x6x8xf32>, tensor<128x256x3x3xf32>) outs(%z : tensor<1x128x4x6xf32>) -> tensor<1x128x4x6xf32>
  return %c : tensor<1x128x4x6xf32>
}
