// RUN: %opt %s --o3-vectorize-elementwise=target=x86-64-v4 --o3-vector-cleanup | FileCheck %s

// Softmax-like rows of 300 (masked 64-lane chunks, broadcast of a per-row
// value): masked transfers become transfers with a mask operand, leading
// unit dims are dropped; the pass terminates (mixing these
// pattern sets with the leading-unit-dim / permutation patterns looped forever).
// CHECK-LABEL: func.func @sub_row_max
// CHECK-NOT: vector.mask
// CHECK: vector.transfer_read {{.*}}, %{{.*}}, %{{.*}} {{{.*}}} : tensor<1x?xf32>, vector<64xf32>
// CHECK: arith.subf {{.*}} : vector<64xf32>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @sub_row_max(%x: tensor<6x300xf32>, %m: tensor<6xf32>) -> tensor<6x300xf32> {
  %e = tensor.empty() : tensor<6x300xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<6x300xf32>, tensor<6xf32>) outs(%e : tensor<6x300xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<6x300xf32>
  return %r : tensor<6x300xf32>
}

// A row reduction becomes a vector.reduction per row.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: vector.multi_reduction
// CHECK: vector.reduction <add>, {{.*}} : vector<100xf32> into f32
#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: tensor<4x100xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x100xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
