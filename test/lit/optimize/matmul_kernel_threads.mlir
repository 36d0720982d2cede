// RUN: %opt %s --o3-pack-matmul --o3-matmul-kernel-threads | FileCheck %s

// Multi-threaded kernel: the M-block loop is an scf.forall (distributed by
// async-parallel-for at codegen), the N-block and k loops stay scf.for.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: scf.for
// CHECK: scf.for {{.*}} -> ({{.*}}vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
func.func @matmul(%a: tensor<32x32xf32>, %b: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %m : tensor<32x64xf32>
}
