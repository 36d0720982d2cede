// RUN: %opt %s --o3-pool-dyn=target=x86-64-v4 | FileCheck %s
// RUN: %opt %s --o3-pool-dyn=target=x86-64-v4,threads=1 | FileCheck %s --check-prefix=THREADS

// A 3x3 stride-2 MaxPool of a -inf padded image with dynamic H/W
// (x86-64-v4: 16 lanes): per channel and output row, whole chunks of 16
// columns in a loop (each tap reads 31 values and keeps every other lane,
// max-combined from the fill's -inf, whose first max folds away), then one
// masked chunk (the read's mask covers 2r-1 values of the span) and a
// masked write.
// CHECK-LABEL: func.func @maxpool_dyn
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK: vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.create_mask %{{.*}} : vector<31xi1>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : tensor<1x4x?x?xf32>, vector<31xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<31xf32>, vector<31xf32>
// CHECK-COUNT-8: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<16xf32>, tensor<1x1x?x?xf32>
// CHECK: vector.transfer_read {{.*}}, %{{.*}}, %{{.*}} {in_bounds = [true]} : tensor<1x4x?x?xf32>, vector<31xf32>
// CHECK: vector.transfer_write {{.*}}, %{{.*}} {in_bounds = [true]} : vector<16xf32>, tensor<1x1x?x?xf32>
// THREADS-LABEL: func.func @maxpool_dyn
// THREADS: scf.forall (%{{.*}}) in (4)
func.func @maxpool_dyn(%x: tensor<1x4x?x?xf32>, %oh: index, %ow: index) -> tensor<1x4x?x?xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %ninf : f32
  } : tensor<1x4x?x?xf32> to tensor<1x4x?x?xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty(%oh, %ow) : tensor<1x4x?x?xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %win : tensor<1x4x?x?xf32>, tensor<3x3xf32>) outs(%f : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  return %r : tensor<1x4x?x?xf32>
}

// A 3x3 stride-2 depthwise conv of a zero-padded image with dynamic H/W
// (passes/optimize/depthwise_dyn.py): no tensor.pad left, the scratch plane
// zeroed once, the copy splitting each 32 input columns into their even and
// odd ones, a map of one vector's width in groups of 8 rows (the tap's 8
// FMAs, each a whole-vector read of the plane: no 31-lane read), each
// vector's write masked to the columns before OW (and none for a row past OH).
// CHECK-LABEL: func.func @depthwise_dyn
// CHECK-NOT: tensor.pad
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<16xf32>, tensor<?x?xf32>
// CHECK: scf.if
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<16xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.create_mask %{{.*}} : vector<16xi1>
// CHECK: vector.transfer_write %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}} : vector<16xf32>, tensor<1x4x?x?xf32>
// CHECK-NOT: vector<31xf32>
// THREADS-LABEL: func.func @depthwise_dyn
// THREADS: scf.forall (%{{.*}}) in (4)
func.func @depthwise_dyn(%x: tensor<1x4x?x?xf32>, %w: tensor<4x3x3xf32>, %oh: index, %ow: index) -> tensor<1x4x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x?x?xf32> to tensor<1x4x?x?xf32>
  %e = tensor.empty(%oh, %ow) : tensor<1x4x?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %w : tensor<1x4x?x?xf32>, tensor<4x3x3xf32>) outs(%f : tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32>
  return %r : tensor<1x4x?x?xf32>
}
