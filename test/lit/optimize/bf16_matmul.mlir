// RUN: %opt %s --split-input-file --o3-bf16-matmul=target=znver4 | FileCheck %s
// RUN: %opt %s --split-input-file --o3-bf16-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=NOBF16
// A matmul of bf16 inputs into an f32 zero fill with a constant B (what
// --precision bf16 lowers an f32 MatMul to) becomes the AVX512-BF16 kernel
// (passes/optimize/matmul_bf16.py): B packed as [N/16, ceil(K/2), 32] bf16
// (K = 3 odd: a zero row), vdpbf16ps steps; a target without AVX512-BF16
// keeps the matmul.

// CHECK-LABEL: func.func @odd_k
// CHECK-NOT: linalg.matmul
// CHECK: arith.constant dense{{.*}} : tensor<1x2x32xbf16>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<1x2x32xbf16>, vector<32xbf16>
// CHECK: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// NOBF16-LABEL: func.func @odd_k
// NOBF16: linalg.matmul
// NOBF16-NOT: x86vector
func.func @odd_k(%a: tensor<?x3xbf16>) -> tensor<?x16xf32> {
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]]> : tensor<3x16xbf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x3xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x3xbf16>, tensor<3x16xbf16>) outs(%f : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// Not into a zero fill (an accumulation into a bias): not this kernel.
// CHECK-LABEL: func.func @bias_init
// CHECK: linalg.matmul
// CHECK-NOT: x86vector
func.func @bias_init(%a: tensor<4x2xbf16>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %b = arith.constant dense<1.0> : tensor<2x16xbf16>
  %r = linalg.matmul ins(%a, %b : tensor<4x2xbf16>, tensor<2x16xbf16>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
