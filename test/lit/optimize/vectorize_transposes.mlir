// RUN: %opt %s --o3-vectorize-transposes=target=x86-64-v4 | FileCheck %s

// NHWC -> NCHW (the innermost dim moves): tiled 16 x 16 over (C, W), every
// other loop by 1; per block one read of 16 x 16 through a permutation map
// (a transpose in registers once lowered) and one write.
// CHECK-LABEL: func.func @nhwc_to_nchw
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} {permutation_map = {{.*}}} : tensor<1x1x16x16xf32>, vector<1x16x1x16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<1x16x1x16xf32>, tensor<1x16x1x16xf32>
// CHECK-NOT: linalg.transpose
func.func @nhwc_to_nchw(%x: tensor<1x32x32x64xf32>) -> tensor<1x64x32x32xf32> {
  %0 = tensor.empty() : tensor<1x64x32x32xf32>
  %t = linalg.transpose ins(%x : tensor<1x32x32x64xf32>) outs(%0 : tensor<1x64x32x32xf32>) permutation = [0, 3, 1, 2]
  return %t : tensor<1x64x32x32xf32>
}

// A ReLU fused into the transpose (a generic reading its input permuted) is
// taken the same way.
// CHECK-LABEL: func.func @relu_nhwc_to_nchw
// CHECK: vector.transfer_read {{.*}} {permutation_map = {{.*}}} : tensor<1x1x16x16xf32>, vector<1x16x1x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x16x1x16xf32>
// CHECK-NOT: linalg.generic
#in = affine_map<(n, c, h, w) -> (n, h, w, c)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @relu_nhwc_to_nchw(%x: tensor<1x16x16x32xf32>) -> tensor<1x32x16x16xf32> {
  %0 = tensor.empty() : tensor<1x32x16x16xf32>
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x16x16x32xf32>) outs(%0 : tensor<1x32x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}

// Not a whole number of 16 x 16 blocks (W = 56): left as it is (a masked
// block came out wrong).
// CHECK-LABEL: func.func @partial_blocks_left
// CHECK: linalg.transpose
func.func @partial_blocks_left(%x: tensor<1x64x56x56xf32>) -> tensor<1x56x56x64xf32> {
  %0 = tensor.empty() : tensor<1x56x56x64xf32>
  %t = linalg.transpose ins(%x : tensor<1x64x56x56xf32>) outs(%0 : tensor<1x56x56x64xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x56x56x64xf32>
}

// The innermost dim stays (a batch of rows moved): not this pass's.
// CHECK-LABEL: func.func @inner_dim_kept
// CHECK: linalg.transpose
func.func @inner_dim_kept(%x: tensor<2x16x32x64xf32>) -> tensor<2x32x16x64xf32> {
  %0 = tensor.empty() : tensor<2x32x16x64xf32>
  %t = linalg.transpose ins(%x : tensor<2x16x32x64xf32>) outs(%0 : tensor<2x32x16x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x32x16x64xf32>
}
