// RUN: %opt %s --split-input-file --o3-bf16-matmul=target=sapphirerapids | FileCheck %s
// RUN: %opt %s --split-input-file --o3-bf16-conv=target=sapphirerapids | FileCheck %s --check-prefix=CONV
// RUN: %opt %s --split-input-file --o3-bf16-matmul=target=znver4 | FileCheck %s --check-prefix=ZEN4
// On a target with AMX-BF16 the bf16 contractions of --precision bf16 become
// the AMX kernels (passes/optimize/matmul_bf16_amx.py): B packed as
// [N'/16 * Kp/2, 32] bf16 (K = 3 padded to Kp = 32, N = 40 to N' = 48),
// blocks of 32 rows copied into a [32, Kp] buffer (K not a multiple of 32:
// a masked read of the 3 elements, zeros past them), 2 A x 2 B tiles into
// 2 x 2 C tiles (tdpbf16ps), then the odd column tile; the result [M', 48]
// sliced to [M, 40]. A conv: an im2col of 32 pixels per block from the
// channels-last input, one masked piece of KW * C = 12 elements per filter
// row; a 1x1 conv reads its channels-last pixels as A (no im2col); a conv's
// C tiles go to a [32, F'] buffer per block, written transposed into the
// [F', pixels] result (16x16 blocks, the last pixels masked). Zen 4 (no
// AMX) keeps the AVX512-BF16 kernel.

// CHECK: module attributes {om.cpu_features = [{{.*}}"amx-tile", "amx-bf16"]}
// CHECK-LABEL: func.func @odd_k
// CHECK-NOT: linalg.matmul
// CHECK: arith.constant dense_resource<{{.*}}> : tensor<48x32xbf16>
// CHECK: call @__om_amx_bf16_matmul_3x48
// CHECK: tensor.extract_slice {{.*}} to tensor<?x40xf32>
// CHECK: func.func private @__om_amx_bf16_matmul_3x48
// CHECK: bufferization.to_buffer %arg0 read_only
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x48xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<32x32xbf16>
// CHECK: vector.constant_mask [3] : vector<32xi1>
// CHECK: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-COUNT-4: amx.tile_mulf {{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-4: amx.tile_store
// CHECK-COUNT-2: amx.tile_mulf
// CHECK: bufferization.to_tensor {{.*}} restrict writable
// ZEN4-LABEL: func.func @odd_k
// ZEN4-NOT: amx.
// ZEN4: x86vector.avx512.dot
func.func @odd_k(%a: tensor<?x3xbf16>) -> tensor<?x40xf32> {
  %b = arith.constant dense<0.5> : tensor<3x40xbf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x3xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x40xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x40xf32>) -> tensor<?x40xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x3xbf16>, tensor<3x40xbf16>) outs(%f : tensor<?x40xf32>) -> tensor<?x40xf32>
  return %r : tensor<?x40xf32>
}

// -----

// CONV-LABEL: func.func @conv
// CONV-NOT: linalg.conv_2d_nchw_fchw
// CONV: linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CONV: call @__om_amx_bf16_matmul_36x16_gather0_t16({{.*}}) -> tensor<16x16xf32>
// CONV: tensor.extract_slice {{.*}} to tensor<8x16xf32>
// CONV: tensor.expand_shape {{.*}} into tensor<1x8x4x4xf32>
// CONV: func.func private @__om_amx_bf16_matmul_36x16_gather0_t16
// CONV: memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
// CONV: tensor.extract {{.*}} : tensor<?xi32>
// CONV: vector.constant_mask [12] : vector<32xi1>
// CONV-COUNT-3: vector.transfer_read {{.*}} : memref<144xbf16>, vector<32xbf16>
// CONV: amx.tile_mulf
// CONV: amx.tile_store {{.*}} : memref<32x16xf32>
// CONV: vector.transpose {{.*}} : vector<16x16xf32> to vector<16x16xf32>
// CONV: vector.transfer_write {{.*}} {in_bounds = [true, true]} : vector<16x16xf32>, memref<16x16xf32>
// CONV: vector.transfer_write {{.*}} {in_bounds = [true, false]} : vector<16x16xf32>, memref<16x16xf32>
func.func @conv(%x: tensor<1x3x6x6xbf16>) -> tensor<1x8x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<8x3x3x3xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x6x6xbf16>, tensor<8x3x3x3xbf16>) outs(%f : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %r : tensor<1x8x4x4xf32>
}

// -----

// CONV-LABEL: func.func @pointwise
// CONV: tensor.collapse_shape {{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<1x4x4x32xbf16> into tensor<16x32xbf16>
// CONV: call @__om_amx_bf16_matmul_32x16_t16(
// CONV: func.func private @__om_amx_bf16_matmul_32x16_t16(
// CONV: amx.tile_load %{{.*}} : memref<?x32xbf16> into !amx.tile<16x32xbf16>
func.func @pointwise(%x: tensor<1x32x4x4xbf16>) -> tensor<1x16x4x4xf32> {
  %w = arith.constant dense<0.5> : tensor<16x32x1x1xbf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x32x4x4xbf16>, tensor<16x32x1x1xbf16>) outs(%f : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %r : tensor<1x16x4x4xf32>
}
