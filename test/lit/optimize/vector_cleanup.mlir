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

// A transpose of few rows (the direct conv's 8-pixel x 32-filter tile) is a
// network of shuffles within 4-lane groups (register_transposes.py), not one
// 256-lane shuffle of the flattened block.
// CHECK-LABEL: func.func @tile_8x32
// CHECK-NOT: vector.transpose
// CHECK-NOT: vector<256xf32>
// CHECK: vector.shuffle {{.*}} [0, 32, 1, 33, 4, 36, 5, 37, 8, 40, 9, 41
// CHECK: vector.shuffle {{.*}} : vector<32xf32>, vector<32xf32>
// CHECK-NOT: vector<256xf32>
func.func @tile_8x32(%x: vector<8x32xf32>) -> vector<32x8xf32> {
  %t = vector.transpose %x, [1, 0] : vector<8x32xf32> to vector<32x8xf32>
  return %t : vector<32x8xf32>
}

// A transposed broadcast (a packed matmul's bias per accumulator row) is
// one scalar broadcast per row.
// CHECK-LABEL: func.func @bias_rows
// CHECK-NOT: vector.transpose
// CHECK-COUNT-8: vector.broadcast {{.*}} : f32 to vector<32xf32>
// CHECK-NOT: vector.shuffle
func.func @bias_rows(%b: vector<8xf32>) -> vector<8x32xf32> {
  %s = vector.broadcast %b : vector<8xf32> to vector<32x8xf32>
  %t = vector.transpose %s, [1, 0] : vector<32x8xf32> to vector<8x32xf32>
  return %t : vector<8x32xf32>
}
