// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=CONV
// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4 --o3-pack-matmul=target=x86-64-v4 --o3-fold-constant-relayouts --o3-matmul-kernel | FileCheck %s --check-prefix=KERNEL
// A conv's SiLU (x * sigmoid(x), one generic reading the conv twice) is its
// epilogue (passes/optimize/epilogue.py). The conv-level generic keeps the
// math.exp; in the kernel function it is written as math_approx's polynomial (clamp, the 1.5*2^23 shifter, the exponent bits:
// the standalone Sigmoid kernel's numerics), not a math.exp (which in the
// kernel function would become one expf call per lane). It runs on the 8x32
// accumulator tile after the k loop; there is no separate Sigmoid pass.
// CONV-LABEL: func.func @silu
// CONV: %[[R2:.*]] = linalg.matmul
// CONV: linalg.generic {{.*}} ins(%[[R2]] : tensor<64x1024xf32>) {{.*}}onnx_mlir_py.epilogue
// CONV: arith.negf
// CONV: math.exp
// CONV: arith.divf
// CONV: arith.mulf
// CONV-NOT: linalg.generic
// CONV: return
// KERNEL-LABEL: func.func @silu
// KERNEL: %[[K:.*]]:3 = scf.for
// KERNEL: vector.fma {{.*}} : vector<32xf32>
// KERNEL: %[[NEG:.*]] = arith.negf %[[K]]#2 : vector<8x32xf32>
// KERNEL-NOT: math.exp
// KERNEL: arith.cmpf olt, %[[NEG]], {{.*}} : vector<8x32xf32>
// KERNEL: arith.bitcast {{.*}} : vector<8x32xf32> to vector<8x32xi32>
// KERNEL: %[[SIG:.*]] = arith.divf {{.*}} : vector<8x32xf32>
// KERNEL: arith.mulf %[[K]]#2, %[[SIG]] : vector<8x32xf32>
// KERNEL-NOT: onnx_mlir_py.epilogue
// KERNEL-NOT: math.exp
// KERNEL: return
func.func @silu(%x: tensor<1x64x32x32xf32>, %w: tensor<64x64x1x1xf32>) -> tensor<1x64x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x32x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x64x32x32xf32>, tensor<64x64x1x1xf32>) outs(%z : tensor<1x64x32x32xf32>) -> tensor<1x64x32x32xf32>
  %e2 = tensor.empty() : tensor<1x64x32x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x64x32x32xf32>) outs(%e2 : tensor<1x64x32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %in : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %s = arith.divf %one, %d : f32
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x64x32x32xf32>
  return %y : tensor<1x64x32x32xf32>
}
