// RUN: %opt %s --o3-pipeline=target=x86-64-v4 | FileCheck %s

// The whole -O3 tensor pipeline on conv + bias + ReLU with constant weights:
// weights reshaped and zero-padded to whole k blocks at compile time, a
// vectorized im2col (stride 1: masked 32-lane pieces written straight into
// the kernel's packed panels; the matmul's pack of it folded away), the FMA
// kernel, vectorized epilogue.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: arith.constant {{.*}} : tensor<1x8x5x8xf32>
// CHECK-NOT: tensor.pad
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x4x10x10xf32>, vector<32xf32>
// CHECK-NOT: linalg.pack
// CHECK-NOT: linalg.unpack
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<
// CHECK-NOT: linalg.generic
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @conv_bias_relu(%x: tensor<1x4x10x10xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %b : tensor<1x8x8x8xf32>, tensor<8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%v: f32, %bb: f32, %o: f32):
    %s = arith.addf %v, %bb : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}
