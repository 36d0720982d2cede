// RUN: %opt %s --o3-pipeline=target=x86-64-v4,threads=0 | FileCheck %s
// Two bias-only convs of one shape (passes/optimize/matmul.py): their
// kernels' zero inits are equal, and the pipeline's CSE merges them into
// one generic before the kernels are tiled; each kernel then takes a copy
// of its own (matmul._own_inits), which is fused into its register tile
// (a producer with other users is not fused into an scf.for): both k loops
// start from the zero vector, no output-sized zero tensor is written.
// CHECK-LABEL: func.func @two_bias_only
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (vector<8x32xf32>)
// CHECK: vector.fma
// CHECK: return
func.func @two_bias_only(%x: tensor<1x64x32x32xf32>, %w: tensor<64x64x1x1xf32>, %w2: tensor<64x64x1x1xf32>, %b: tensor<64xf32>, %b2: tensor<64xf32>) -> (tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %cb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x64x32x32xf32>, tensor<64xf32>) outs(%e : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32x32xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w2 : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %cb2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %b2 : tensor<1x64x32x32xf32>, tensor<64xf32>) outs(%e : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %bi: f32, %out: f32):
    %s = arith.addf %in, %bi : f32
    linalg.yield %s : f32
  } -> tensor<1x64x32x32xf32>
  return %cb, %cb2 : tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>
}
