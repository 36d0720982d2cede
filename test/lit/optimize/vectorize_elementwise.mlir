// RUN: %opt %s --o3-vectorize-elementwise=target=x86-64-v4 | FileCheck %s

// Elementwise with a broadcast operand: outer dims tiled by 1, the innermost
// dim (16, small) vectorized whole.
// CHECK-LABEL: func.func @bias_relu
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x16xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @bias_relu(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// A long row that 3 vectors divide and 4 do not (288 = 6 x 48): steps of 48
// lanes, no mask (a masked step would mask every iteration).
// CHECK-LABEL: func.func @row_of_three_vectors
// CHECK: scf.for {{.*}} step %c48
// CHECK-NOT: vector.create_mask
// CHECK: arith.negf {{.*}} : vector<1x48xf32>
// CHECK-NOT: vector.mask
// CHECK: return
func.func @row_of_three_vectors(%x: tensor<2x288xf32>) -> tensor<2x288xf32> {
  %e = tensor.empty() : tensor<2x288xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x288xf32>) outs(%e : tensor<2x288xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<2x288xf32>
  return %r : tensor<2x288xf32>
}

// A long innermost dim (300): chunks of 64 lanes, masked tail.
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for {{.*}} step %c64
// CHECK: vector.create_mask
// CHECK: vector.mask {{.*}} vector.transfer_read
// CHECK: math.exp {{.*}} : vector<1x64xf32>
#id1 = affine_map<(i, j) -> (i, j)>
func.func @long_rows(%x: tensor<3x300xf32>) -> tensor<3x300xf32> {
  %e = tensor.empty() : tensor<3x300xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x300xf32>) outs(%e : tensor<3x300xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<3x300xf32>
  return %r : tensor<3x300xf32>
}

// Row reduction (softmax-style sum over the last dim): a vector reduction per row.
// CHECK-LABEL: func.func @row_sum
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x100xf32> to vector<1xf32>
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

// A true transpose (innermost dim moves) is left to LLVM.
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.transpose
func.func @transpose(%x: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  return %t : tensor<16x8xf32>
}

// Dynamic outer dim, static row: tiled by 1 over the dynamic dim, the row
// vectorized whole, no mask.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: tensor.empty
// CHECK: %[[N:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x16xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %c1 {{.*}} -> (tensor<?x16xf32>)
// CHECK-NOT: vector.mask
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_batch(%x: tensor<?x16xf32>, %b: tensor<16xf32>) -> tensor<?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x16xf32>, tensor<16xf32>) outs(%e : tensor<?x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// A dynamic row: chunks of 4 vectors (64 lanes on AVX-512), the last
// iteration peeled off. The main loop runs to the largest multiple of 64 on
// whole chunks (constant sizes: its all-true masks fold away in the
// pipeline's canonicalization); the remainder loop (at most one trip) is
// masked by the length left.
// CHECK-LABEL: func.func @dynamic_row
// CHECK: scf.for
// CHECK: %[[MAIN:.*]] = affine.apply #{{.*}}()[%{{.*}}, %[[S:.*]], %c64]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[MAIN]] step %c64
// CHECK: math.exp {{.*}} : vector<1x64xf32>
// CHECK: scf.for %[[J:.*]] = %[[MAIN]] to %[[S]] step %c64
// CHECK: %[[LEFT:.*]] = affine.apply #{{.*}}(%[[J]])[%[[S]]]
// CHECK: tensor.extract_slice {{.*}} [1, %[[LEFT]]] [1, 1]
// CHECK: vector.create_mask
// CHECK: math.exp {{.*}} : vector<1x64xf32>
// CHECK-NOT: linalg.generic
func.func @dynamic_row(%x: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<3x?xf32>
  %e = tensor.empty(%n) : tensor<3x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x?xf32>) outs(%e : tensor<3x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<3x?xf32>
  return %r : tensor<3x?xf32>
}

// A row reduction over a dynamic length (Softmax's max): whole chunks of 64
// vectorized (the main loop's slice is 64 wide once canonicalized, so its
// mask folds away), the remainder left a scalar loop: a masked vector tail
// combined the padding lanes into the result (ReduceMax of a row of -inf
// gave -1e-45; test_o3_dynamic.py).
// CHECK-LABEL: func.func @dynamic_row_max
// CHECK: scf.for
// CHECK: %[[MAIN:.*]] = scf.for {{.*}} step %c64
// CHECK: vector.multi_reduction <maximumf>, {{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK: scf.for {{.*}} = %{{.*}} to %{{.*}} step %c64 iter_args(%{{.*}} = %[[MAIN]])
// CHECK-NOT: vector.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: return
func.func @dynamic_row_max(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}
