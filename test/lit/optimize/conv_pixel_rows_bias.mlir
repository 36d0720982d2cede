// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=PACK
// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 --o3-fold-constant-relayouts --o3-matmul-kernel | FileCheck %s --check-prefix=KERNEL
// A biased 1x1 conv in pixel-row form (outᵀ[M, F] = colᵀ @ Wᵀ, the bias
// along the columns F): the packed kernel gets the [F] bias, not an [M, F]
// broadcast of it written and read back (matmul_text init "cols_after"):
// its accumulators start from a zero broadcast fused into the register
// tile and its one-add epilogue adds the bias ([NO, nb] blocks) to each
// tile (with one k block, as here, the add folds into the FMAs' first
// accumulator: the bias read into registers).
// PACK-LABEL: func.func @pixel_rows_bias
// PACK-NOT: tensor<49x32xf32>) {
// PACK: %[[Z:.*]] = linalg.generic {{.*}} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<7x7x1x32xf32>)
// PACK: %[[C:.*]] = linalg.generic {{.*}} outs(%[[Z]] : tensor<7x7x1x32xf32>) {{.*}}onnx_mlir_py.packed_contraction
// PACK: %[[BV:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [1, 32] : tensor<32xf32> into tensor<1x32xf32>
// PACK: linalg.generic {{.*}} ins(%[[C]], %[[BV]] : tensor<7x7x1x32xf32>, tensor<1x32xf32>) {{.*}}onnx_mlir_py.epilogue
// PACK: arith.addf
// PACK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// PACK: return
// KERNEL-LABEL: func.func @pixel_rows_bias
// KERNEL-NOT: linalg.generic
// KERNEL: %[[B:.*]] = vector.transfer_read {{.*}} : tensor<32xf32>, vector<32xf32>
// KERNEL: vector.fma {{.*}}, %[[B]] : vector<32xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// KERNEL: return
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @pixel_rows_bias(%x: tensor<1x8x7x7xf32>, %w: tensor<32x8x1x1xf32>, %b: tensor<32xf32>) -> tensor<1x32x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x8x7x7xf32>, tensor<32x8x1x1xf32>) outs(%z : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %e2 = tensor.empty() : tensor<1x32x7x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x32x7x7xf32>, tensor<32xf32>) outs(%e2 : tensor<1x32x7x7xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x32x7x7xf32>
  return %r : tensor<1x32x7x7xf32>
}
