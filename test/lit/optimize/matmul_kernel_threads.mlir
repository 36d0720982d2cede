// RUN: %opt %s --o3-pack-matmul=target=x86-64-v4 --o3-matmul-kernel=threads=1 | FileCheck %s

// Multi-threaded kernel: the outer block loop is an scf.forall (distributed
// by om_parallel_for at codegen) -- here the 4 column blocks, outermost
// because A (64 KiB) stays in L2 -- the row-block and k loops stay scf.for.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: scf.for {{.*}} to %c16
// CHECK: scf.for {{.*}} -> ({{.*}}vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
func.func @matmul(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>) outs(%z : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %m : tensor<128x128xf32>
}

// A small kernel (fewer than 2^21 multiply-adds) stays on the calling thread.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: vector.fma
// CHECK: return
func.func @small(%a: tensor<32x32xf32>, %b: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %m : tensor<32x64xf32>
}

// 3 column blocks alone would split 2:1 between 2 threads: the forall takes
// the 16 row blocks in too (kernel_plan.forall_takes_both), 48 iterations in
// the serial loops' order; the k loop stays inside.
// CHECK-LABEL: func.func @uneven
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (3, 16)
// CHECK-NOT: scf.for {{.*}} to %c16
// CHECK: scf.for {{.*}} -> ({{.*}}vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
func.func @uneven(%a: tensor<128x256xf32>, %b: tensor<256x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x256xf32>, tensor<256x96xf32>) outs(%z : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %m : tensor<128x96xf32>
}
