// RUN: %opt %s --split-input-file --o3-conv-to-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=CONV
// RUN: %opt %s --split-input-file --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 --o3-fold-constant-relayouts --o3-matmul-kernel | FileCheck %s --check-prefix=KERNEL
// The elementwise ops after a conv (a residual add, then ReLU) become the
// kernel's epilogue (passes/optimize/epilogue.py).
//
// 1x1 conv over 32x32 pixels (im2col form, input read in place): the ops
// move into the conv kernel as one generic on the matmul's [F, pixels]
// result, tagged onnx_mlir_py.epilogue, the residual read as [F, pixels]
// (the two separate generics are gone); the matmul kernel then fuses the
// contraction into it: the add and ReLU on the 8x32 accumulator tile
// (in registers) after the k loop. The conv's zero init is not a tensor:
// the accumulators start from a zero vector.
// CONV-LABEL: func.func @in_place
// CONV: %[[R2:.*]] = linalg.matmul
// CONV: %[[RES:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2, 3]] : tensor<1x64x32x32xf32> into tensor<64x1024xf32>
// CONV: linalg.generic {{.*}} ins(%[[R2]], %[[RES]] : tensor<64x1024xf32>, tensor<64x1024xf32>) {{.*}}onnx_mlir_py.epilogue
// CONV: arith.addf
// CONV: arith.maximumf
// CONV-NOT: linalg.generic
// CONV: return
// KERNEL-LABEL: func.func @in_place
// KERNEL: %[[ACC:.*]] = arith.constant dense<0.000000e+00> : vector<8x32xf32>
// KERNEL-NOT: linalg.fill
// KERNEL: %[[K:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[ACC]])
// KERNEL: vector.fma {{.*}} : vector<32xf32>
// KERNEL: %[[RES:.*]] = vector.transfer_read {{.*}} : tensor<8x32xf32>, vector<8x32xf32>
// KERNEL: %[[SUM:.*]] = arith.addf %[[K]]#2, %[[RES]] : vector<8x32xf32>
// KERNEL: arith.maximumf %[[SUM]], {{.*}} : vector<8x32xf32>
// KERNEL-NOT: onnx_mlir_py.epilogue
// KERNEL: return
func.func @in_place(%x: tensor<1x64x32x32xf32>, %w: tensor<64x64x1x1xf32>, %res: tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %e2 = tensor.empty() : tensor<1x64x32x32xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %res : tensor<1x64x32x32xf32>, tensor<1x64x32x32xf32>) outs(%e2 : tensor<1x64x32x32xf32>) {
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

// Pixel-row form (49 pixels): the epilogue runs on each transposed 16x16
// block, the residual read in the same block of the output.
// CONV-LABEL: func.func @pixel_rows
// CONV: linalg.matmul
// CONV: scf.for
// CONV: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CONV: vector.transfer_read {{.*}} : tensor<32x49xf32>, vector<16x16xf32>
// CONV: arith.addf {{.*}} : vector<16x16xf32>
// CONV: arith.maximumf {{.*}} : vector<16x16xf32>
// CONV: vector.transfer_write
// CONV-NOT: linalg.generic
// CONV: return
func.func @pixel_rows(%x: tensor<1x8x7x7xf32>, %w: tensor<32x8x1x1xf32>, %b: tensor<32xf32>, %res: tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32> {
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
  %e3 = tensor.empty() : tensor<1x32x7x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %res : tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>) outs(%e3 : tensor<1x32x7x7xf32>) {
  ^bb0(%in: f32, %rr: f32, %out: f32):
    %s = arith.addf %in, %rr : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x32x7x7xf32>
  return %y : tensor<1x32x7x7xf32>
}
