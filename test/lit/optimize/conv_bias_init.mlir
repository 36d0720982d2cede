// RUN: %opt %s --split-input-file --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=PACK
// RUN: %opt %s --split-input-file --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 --o3-fold-constant-relayouts --o3-matmul-kernel | FileCheck %s --check-prefix=KERNEL
// The packed matmul kernel of a conv with a bias starts its accumulators
// from the bias in registers (passes/optimize/matmul.py matmul_init): no
// output-sized broadcast of the bias is written and read back.
//
// Bias + residual Add + ReLU (the kernel's epilogue): the kernel takes the
// bias vector and broadcasts it in blocks ([MO, mb] -> [MO, mb, NO, nb]);
// that generic is fused into the register tile, where it is the 8 x 32
// accumulators' init (one vector<8> read, broadcast along the 32 columns),
// and the residual is read once, after the k loop.
// PACK-LABEL: func.func @bias_residual
// PACK-NOT: tensor<1x64x1024xf32>
// PACK: %[[BV:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// PACK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BV]] : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8x32x32xf32>)
// PACK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<8x8x32x32xf32>) {{.*}}onnx_mlir_py.packed_contraction
// PACK: onnx_mlir_py.epilogue
// PACK: return
// KERNEL-LABEL: func.func @bias_residual
// KERNEL-NOT: linalg.generic
// KERNEL: %[[B:.*]] = vector.transfer_read {{.*}} : tensor<8xf32>, vector<8xf32>
// KERNEL: %[[BB:.*]] = vector.broadcast %[[B]] : vector<8xf32> to vector<32x8xf32>
// KERNEL: %[[ACC:.*]] = vector.transpose %[[BB]], [1, 0] : vector<32x8xf32> to vector<8x32xf32>
// KERNEL: %[[K:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[ACC]])
// KERNEL: vector.fma {{.*}} : vector<32xf32>
// KERNEL: %[[RES:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// KERNEL: %[[SUM:.*]] = arith.addf %[[K]]#2, %[[RES]] : vector<8x32xf32>
// KERNEL: arith.maximumf %[[SUM]], {{.*}} : vector<8x32xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return
func.func @bias_residual(%x: tensor<1x64x32x32xf32>, %w: tensor<64x64x1x1xf32>, %b: tensor<64xf32>, %res: tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %e1 = tensor.empty() : tensor<1x64x32x32xf32>
  %cb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x64x32x32xf32>, tensor<64xf32>) outs(%e1 : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32x32xf32>
  %e2 = tensor.empty() : tensor<1x64x32x32xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cb, %res : tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>) outs(%e2 : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %s = arith.addf %in, %r : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32x32xf32>
  %e3 = tensor.empty() : tensor<1x64x32x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x64x32x32xf32>) outs(%e3 : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x32x32xf32>
  return %y : tensor<1x64x32x32xf32>
}


// -----

// Bias only (no elementwise op after the conv): the accumulators start
// from zero and the kernel's own epilogue adds the bias (one add per
// accumulator after the k loop); an epilogue that only copied the result
// would be erased by the canonicalizer, leaving the init unfused.
// PACK-LABEL: func.func @bias_only
// PACK-NOT: tensor<1x64x1024xf32>
// PACK: %[[Z:.*]] = linalg.generic {{.*}} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8x8x32x32xf32>)
// PACK: %[[C:.*]] = linalg.generic {{.*}} outs(%[[Z]] : tensor<8x8x32x32xf32>) {{.*}}onnx_mlir_py.packed_contraction
// PACK: %[[BV:.*]] = tensor.expand_shape %arg2 {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
// PACK: linalg.generic {{.*}} ins(%[[C]], %[[BV]] : tensor<8x8x32x32xf32>, tensor<8x8xf32>) {{.*}}onnx_mlir_py.epilogue
// PACK: arith.addf
// PACK: return
// KERNEL-LABEL: func.func @bias_only
// KERNEL: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: %[[K:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[ZERO]])
// KERNEL: vector.fma {{.*}} : vector<32xf32>
// KERNEL: %[[B:.*]] = vector.transfer_read {{.*}} : tensor<8xf32>, vector<8xf32>
// KERNEL: %[[BB:.*]] = vector.broadcast %[[B]] : vector<8xf32> to vector<32x8xf32>
// KERNEL: %[[BT:.*]] = vector.transpose %[[BB]], [1, 0] : vector<32x8xf32> to vector<8x32xf32>
// KERNEL: arith.addf %[[K]]#2, %[[BT]] : vector<8x32xf32>
// KERNEL-NOT: linalg.generic
// KERNEL: return

func.func @bias_only(%x: tensor<1x64x32x32xf32>, %w: tensor<64x64x1x1xf32>, %b: tensor<64xf32>) -> tensor<1x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %e1 = tensor.empty() : tensor<1x64x32x32xf32>
  %cb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x64x32x32xf32>, tensor<64xf32>) outs(%e1 : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32x32xf32>
  return %cb : tensor<1x64x32x32xf32>
}
