// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4 | FileCheck %s
// A biased 1x1 conv over 49 pixels (7x7: not whole 32-column panels) in
// pixel-row form: its input read in place as a transposed A ([C, M] with
// A's map (d2, d0)), the filters as columns (Wᵀ), the bias broadcast along
// the rows as the init; the [49, 32] result transposed into NCHW in 16x16
// blocks (3 whole blocks of pixels, then a static 1-pixel tail).
// CHECK-LABEL: func.func @pixel_rows
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] : tensor<1x8x7x7xf32> into tensor<8x49xf32>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<32x8xf32>) outs(%{{.*}} : tensor<8x32xf32>) permutation = [1, 0]
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%arg2 : tensor<32xf32>) outs(%{{.*}} : tensor<49x32xf32>)
// CHECK: %[[R:.*]] = linalg.matmul indexing_maps = [#[[A:.*]], #{{.*}}, #{{.*}}] ins(%[[X]], %[[WT]] : tensor<8x49xf32>, tensor<8x32xf32>) outs(%[[INIT]] : tensor<49x32xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c48 step %c16
// CHECK: vector.transfer_read %[[R]]{{.*}} : tensor<49x32xf32>, vector<16x16xf32>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK: vector.transfer_read %[[R]][%c48, {{.*}} : tensor<49x32xf32>, vector<1x16xf32>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<1x16xf32> to vector<16x1xf32>
// CHECK: tensor.expand_shape {{.*}} into tensor<1x32x7x7xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @pixel_rows(%x: tensor<1x8x7x7xf32>, %w: tensor<32x8x1x1xf32>, %b: tensor<32xf32>) -> tensor<1x32x7x7xf32> {
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
