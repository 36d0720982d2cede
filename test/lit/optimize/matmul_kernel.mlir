// RUN: %opt %s --o3-pack-matmul=target=x86-64-v4 --o3-matmul-kernel | FileCheck %s

// The packed contraction becomes loops over (8 x 32) blocks and k blocks; the
// accumulator is a vector<8x32xf32> loop-carried in registers (hoisted out of
// the k loop); the block contraction is 8 (k) x 8 (rows) FMAs of 32 lanes.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[ACC:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}} = %[[ACC]]) -> ({{.*}}vector<8x32xf32>)
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield {{.*}}, {{.*}} : {{.*}}vector<8x32xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8x32xf32>, tensor<8x32xf32>
// CHECK-NOT: linalg.generic
func.func @matmul(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @batch
// CHECK: scf.for {{.*}} -> (tensor<3x1x8x1x32xf32>)
// CHECK: scf.for {{.*}} -> ({{.*}}vector<8x32xf32>)
// CHECK: vector.fma
func.func @batch(%a: tensor<3x8x16xf32>, %b: tensor<3x16x32xf32>) -> tensor<3x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<3x8x16xf32>, tensor<3x16x32xf32>) outs(%z : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  return %m : tensor<3x8x32xf32>
}

// K in one k block (5 padded to 8): no k loop is tiled (the one-trip loop
// was folded away while its handle was still in use, the schedule failed and
// the contraction stayed a scalar loop nest); the block is still 8 x 8 FMAs.
// CHECK-LABEL: func.func @one_k_block
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// CHECK-COUNT-64: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @one_k_block(%a: tensor<16x5xf32>, %b: tensor<5x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x5xf32>, tensor<5x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}
