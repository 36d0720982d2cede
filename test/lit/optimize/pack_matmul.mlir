// RUN: %opt %s --o3-pack-matmul=target=x86-64-v4 | FileCheck %s

// Static matmul, multiples of the (8, 32, 8) blocks: only B is relaid out;
// A and C are viewed in blocks (expand_shape, no copy).
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: linalg.matmul
// CHECK: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [8, 32] {{.*}} -> tensor<2x4x8x32xf32>
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<2x8x4x8xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]{{.*}}onnx_mlir_py.packed_contraction
// CHECK: tensor.collapse_shape {{.*}} into tensor<16x64xf32>
func.func @matmul(%a: tensor<16x32xf32>, %b: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x64xf32>) outs(%z : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}

// Sizes that are not multiples of the blocks: zero padding, result sliced.
// M = 5 is below the 8-row block: a 5-row tile (no row padding), its
// columns capped at N rounded up to a vector (16)
// CHECK-LABEL: func.func @odd
// CHECK: tensor.pad %arg0 low[0, 0] high[0, 3]
// CHECK: linalg.pack %arg1 padding_value
// CHECK-SAME: inner_tiles = [8, 16] {{.*}} -> tensor<1x2x8x16xf32>
// CHECK: onnx_mlir_py.packed_contraction
// CHECK: tensor.extract_slice {{.*}}[0, 0] [5, 7] [1, 1] : tensor<5x16xf32> to tensor<5x7xf32>
func.func @odd(%a: tensor<5x13xf32>, %b: tensor<13x7xf32>) -> tensor<5x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x7xf32>) -> tensor<5x7xf32>
  %m = linalg.matmul ins(%a, %b : tensor<5x13xf32>, tensor<13x7xf32>) outs(%z : tensor<5x7xf32>) -> tensor<5x7xf32>
  return %m : tensor<5x7xf32>
}

// M = 2 (a recurrent step at batch 2): a 2 x 64 register tile (B streams
// in panels of at most 128 floats a k step, matmul.SMALL_M_ROW_FLOATS),
// instead of 8 rows of which 6 are padding
// CHECK-LABEL: func.func @small_m
// CHECK-NOT: tensor.pad
// CHECK: linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [8, 64] {{.*}} -> tensor<4x4x8x64xf32>
// CHECK: tensor.expand_shape %arg0 {{.*}} into tensor<1x2x4x8xf32>
// CHECK: onnx_mlir_py.packed_contraction
func.func @small_m(%a: tensor<2x32xf32>, %b: tensor<32x256xf32>) -> tensor<2x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x256xf32>) -> tensor<2x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<2x32xf32>, tensor<32x256xf32>) outs(%z : tensor<2x256xf32>) -> tensor<2x256xf32>
  return %m : tensor<2x256xf32>
}

// batch_matmul: a leading batch loop.
// CHECK-LABEL: func.func @batch
// CHECK: linalg.pack %arg1 outer_dims_perm = [0, 2, 1] inner_dims_pos = [1, 2]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]{{.*}}onnx_mlir_py.packed_contraction
func.func @batch(%a: tensor<3x8x16xf32>, %b: tensor<3x16x32xf32>) -> tensor<3x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<3x8x16xf32>, tensor<3x16x32xf32>) outs(%z : tensor<3x8x32xf32>) -> tensor<3x8x32xf32>
  return %m : tensor<3x8x32xf32>
}

// Dynamic M (a sequence length): B (not a constant here, so not relaid
// out) and the whole row blocks of A and C are viewed in blocks (slices,
// no copy) and computed by the packed contraction with a run-time block
// count; the M % 8 remainder rows are padded to one block under an scf.if.
// No pack of A or C, no unpack.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: linalg.unpack
// CHECK: %[[MO:.*]] = arith.divui %{{.*}}, %c8
// CHECK: %[[MF:.*]] = arith.muli %[[MO]], %c8
// CHECK: tensor.expand_shape %arg1 {{.*}} into tensor<2x8x1x32xf32>
// CHECK: tensor.extract_slice %arg0[0, 0] [%[[MF]], 16] [1, 1]
// CHECK: tensor.expand_shape {{.*}} output_shape [%[[MO]], 8, 2, 8] : tensor<?x16xf32> into tensor<?x8x2x8xf32>
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<?x8x1x32xf32>) {{.*}}onnx_mlir_py.packed_contraction
// CHECK: scf.if
// CHECK: tensor.pad %{{.*}} low[0, 0] high[%{{.*}}, 0]
// CHECK: } : tensor<?x16xf32> to tensor<8x16xf32>
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<1x8x1x32xf32>) {{.*}}onnx_mlir_py.packed_contraction
func.func @dynamic(%a: tensor<?x16xf32>, %b: tensor<16x32xf32>) -> tensor<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%d) : tensor<?x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x32xf32>) outs(%z : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %m : tensor<?x32xf32>
}

// Attention scores with a dynamic batch and sequence (computed B, a dynamic
// N): B and C padded to whole column blocks and viewed in blocks (B is not
// relaid out), the remainder rows of A padded.
// CHECK-LABEL: func.func @scores
// CHECK-NOT: linalg.pack
// CHECK: tensor.expand_shape {{.*}} into tensor<?x2x8x?x32xf32>
// CHECK: linalg.generic {{.*}}onnx_mlir_py.packed_contraction
// CHECK: scf.if
// CHECK: linalg.generic {{.*}}onnx_mlir_py.packed_contraction
// CHECK: tensor.extract_slice {{.*}} : tensor<?x?x?xf32> to tensor<?x?x?xf32>
func.func @scores(%q: tensor<?x?x16xf32>, %k: tensor<?x16x?xf32>) -> tensor<?x?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x16xf32>
  %m = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %n = tensor.dim %k, %c2 : tensor<?x16x?xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %r = linalg.batch_matmul ins(%q, %k : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%z : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

// A dynamic K (attention weights times values): k blocks of 1, so neither
// A nor B needs padding along K; the multiply-add may fuse.
// CHECK-LABEL: func.func @values
// CHECK-NOT: tensor.pad %arg0
// CHECK: tensor.expand_shape %arg1 {{.*}} into tensor<?x?x1x1x32xf32>
// CHECK: arith.mulf {{.*}} fastmath<contract>
func.func @values(%p: tensor<?x?x?xf32>, %v: tensor<?x?x32xf32>) -> tensor<?x?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %p, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %p, %c1 : tensor<?x?x?xf32>
  %e = tensor.empty(%b, %m) : tensor<?x?x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %r = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x32xf32>) outs(%z : tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %r : tensor<?x?x32xf32>
}

// Dynamic M: whole 8-row blocks in place; the M % 8 remainder rows padded
// to 2, 4 or 8 rows (nested scf.ifs on the remainder) when C has whole
// column blocks
// CHECK-LABEL: func.func @dynamic_remainder
// CHECK: tensor<?x8x3x8xf32>
// CHECK: scf.if
// CHECK: arith.cmpi ule, {{.*}}, %c2
// CHECK: scf.if
// CHECK: tensor.expand_shape {{.*}} into tensor<1x2x3x8xf32>
// CHECK: } else {
// CHECK: tensor.expand_shape {{.*}} into tensor<1x4x3x8xf32>
// CHECK: } else {
// CHECK: tensor.expand_shape {{.*}} into tensor<1x8x3x8xf32>
func.func @dynamic_remainder(%a: tensor<?x24xf32>, %b: tensor<24x64xf32>) -> tensor<?x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x24xf32>
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x24xf32>, tensor<24x64xf32>) outs(%z : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
