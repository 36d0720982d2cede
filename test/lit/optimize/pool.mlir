// RUN: %opt %s --o3-pools=target=x86-64-v4 | FileCheck %s

// MaxPool 3x3/2 with its -inf pad (x86-64-v4: 16 lanes, but the 4-wide
// output rows take 8-lane vectors): per channel the plane is copied into a
// scratch whose border holds -inf (filled once, by vector stores); the 4
// output rows are one group (row_kernel.row_group), each a tree of maxima
// over the 9 taps (stride 2: 16 values read, every second kept in
// vshufps order, put back in order before the store; row_kernel.max_tree:
// a > b ? a : b selects, 9 a vector with the start's -inf, which LLVM
// folds, and the NaN lanes by unordered compares), stored 4 lanes wide.
// CHECK-LABEL: func.func @maxpool
// CHECK-NOT: linalg.pooling
// CHECK-NOT: tensor.pad
// CHECK-DAG: %[[NINF:.*]] = arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: vector.transfer_write %[[NINF]], {{.*}} : vector<8xf32>, tensor<10x18xf32>
// CHECK: scf.for
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x2x8x8xf32>, vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>, tensor<10x18xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<10x18xf32>, vector<16xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 8, 10, 4, 6, 12, 14]
// CHECK-COUNT-36: arith.cmpf ogt, {{.*}} : vector<8xf32>
// CHECK-NOT: arith.cmpf ogt
// CHECK-COUNT-4: vector.transfer_write {{.*}} : vector<4xf32>, tensor<1x2x4x4xf32>
func.func @maxpool(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x2x8x8xf32> to tensor<1x2x10x10xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %w = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x2x10x10xf32>, tensor<3x3xf32>) outs(%f : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
