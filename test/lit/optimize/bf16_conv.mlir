// RUN: %opt %s --o3-bf16-conv=target=znver4 | FileCheck %s
// RUN: %opt %s --o3-bf16-conv=target=x86-64-v4 | FileCheck %s --check-prefix=NOBF16
// A static conv of a bf16 input and constant bf16 filters into an f32 zero
// fill (what --precision bf16 lowers an f32 Conv to) becomes the bf16 kernel
// in its gather form (passes/optimize/conv_bf16.py): the input transposed to
// channels-last with a zero channel (C = 3 odd), the filters packed as
// [1, 3 * 3 * 4 / 2, 32] bf16 (F = 8: zero columns up to 16), tables of the
// 16 pixels' offsets and the 18 k pairs', vdpbf16ps steps, the result
// transposed back in 16x16 blocks; a target without AVX512-BF16 keeps the conv.

// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK-DAG: arith.constant dense{{.*}} : tensor<1x18x32xbf16>
// CHECK-DAG: arith.constant dense{{.*}} : tensor<18xi32>
// CHECK-DAG: arith.constant dense<[0, 4, 8, 12, 24, 28, 32, 36, 48, 52, 56, 60, 72, 76, 80, 84]> : tensor<16xi32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK: tensor.insert_slice {{.*}} into tensor<1x6x6x4xbf16>
// CHECK: call @__om_bf16_matmul_36x16_16_gather144
// CHECK: vector.transpose {{.*}} : vector<16x16xf32> to vector<16x16xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<1x8x4x4xf32>
// CHECK: func.func private @__om_bf16_matmul_36x16_16_gather144
// CHECK: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// NOBF16-LABEL: func.func @conv
// NOBF16: linalg.conv_2d_nchw_fchw
// NOBF16-NOT: x86vector
func.func @conv(%x: tensor<1x3x6x6xbf16>) -> tensor<1x8x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<8x3x3x3xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x6x6xbf16>, tensor<8x3x3x3xbf16>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}
