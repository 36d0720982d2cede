// RUN: %opt %s --o3-resolve-dims | FileCheck %s
// RUN: %opt %s --o3-resolve-dims --o3-depthwise=target=x86-64-v4 | FileCheck %s --check-prefix=FUSED
// RUN: %opt %s --o3-depthwise=target=x86-64-v4 | FileCheck %s --check-prefix=UNRESOLVED

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>

// A dynamic batch: the lowering reads each result's batch dim for its
// allocation check, so the ReLU6 before the pad has a second user (the
// tensor.dim) and the depthwise kernel could not take it as its prologue.
// Resolved, every dim is read off the op's init (a tensor.empty) and the
// ReLU6 is fused into the kernel's plane copy (only the 1x1 conv's bias add
// before it is left).
// CHECK-LABEL: func.func @dw_dyn_prologue
// CHECK: tensor.dim %arg0, %c0
// CHECK-NEXT: %[[E0:.*]] = tensor.empty
// CHECK: %[[D1:.*]] = tensor.dim %[[E0]], %c0
// CHECK-NEXT: %[[E1:.*]] = tensor.empty(%[[D1]])
// CHECK: %[[D2:.*]] = tensor.dim %[[E1]], %c0
// CHECK: tensor.pad
// CHECK: %[[E2:.*]] = tensor.empty(%[[D2]])
// CHECK: linalg.depthwise_conv_2d_nchw_chw
// CHECK-NEXT: tensor.dim %[[E2]], %c0
// CHECK-NOT: tensor.dim
// FUSED-LABEL: func.func @dw_dyn_prologue
// FUSED: linalg.generic
// FUSED: arith.addf
// FUSED-NOT: linalg.generic
// FUSED: scf.for
// FUSED: arith.maximumf {{.*}} : vector<16xf32>
// FUSED: arith.minimumf {{.*}} : vector<16xf32>
// FUSED-NOT: linalg.generic
// UNRESOLVED-LABEL: func.func @dw_dyn_prologue
// UNRESOLVED: linalg.generic
// UNRESOLVED: linalg.generic
// UNRESOLVED: arith.minimumf {{.*}} : f32
func.func @dw_dyn_prologue(%x: tensor<?x4x20x20xf32>, %b: tensor<4xf32>, %w: tensor<4x3x3xf32>) -> tensor<?x4x20x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x20x20xf32>
  %eb = tensor.empty(%n) : tensor<?x4x20x20xf32>
  %xb = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x, %b : tensor<?x4x20x20xf32>, tensor<4xf32>) outs(%eb : tensor<?x4x20x20xf32>) {
  ^bb0(%in: f32, %bc: f32, %o: f32):
    %s = arith.addf %in, %bc : f32
    linalg.yield %s : f32
  } -> tensor<?x4x20x20xf32>
  %nb = tensor.dim %xb, %c0 : tensor<?x4x20x20xf32>
  %e0 = tensor.empty(%nb) : tensor<?x4x20x20xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%xb : tensor<?x4x20x20xf32>) outs(%e0 : tensor<?x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %lo = arith.maximumf %in, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x4x20x20xf32>
  %n1 = tensor.dim %h, %c0 : tensor<?x4x20x20xf32>
  %p = tensor.pad %h low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x4x20x20xf32> to tensor<?x4x22x22xf32>
  %e = tensor.empty(%n1) : tensor<?x4x20x20xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x20x20xf32>) -> tensor<?x4x20x20xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<?x4x22x22xf32>, tensor<4x3x3xf32>) outs(%z : tensor<?x4x20x20xf32>) -> tensor<?x4x20x20xf32>
  %n2 = tensor.dim %c, %c0 : tensor<?x4x20x20xf32>
  %e2 = tensor.empty(%n2) : tensor<?x4x20x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c : tensor<?x4x20x20xf32>) outs(%e2 : tensor<?x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %lo = arith.maximumf %in, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    linalg.yield %hi : f32
  } -> tensor<?x4x20x20xf32>
  return %r : tensor<?x4x20x20xf32>
}
