// RUN: %opt %s --o3-vectorize-elementwise=target=x86-64-v4,threads=0 | FileCheck %s

// Run-time H and W read by every operand as its trailing dims (or not at all: the
// [N, C, 1, 1] gate of a squeeze-excitation) are one row of H*W elements
// (collapse_rows.py): the operands are collapsed to [N, C, H*W] (the gate to [N, C, 1]),
// the row is vectorized in chunks of 4 vectors, and the result is reshaped back.
// CHECK-LABEL: func.func @se_gate
// CHECK-DAG: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<?x8x?x?xf32> into tensor<?x8x?xf32>
// CHECK-DAG: tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : tensor<?x8x1x1xf32> into tensor<?x8x1xf32>
// CHECK: arith.mulf {{.*}} : vector<1x1x64xf32>
// CHECK-NOT: linalg.generic
// CHECK: tensor.reshape {{.*}} -> tensor<?x8x?x?xf32>
// CHECK: return
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#gate = affine_map<(n, c, h, w) -> (n, c, 0, 0)>
#wrow = affine_map<(n, c, h, w) -> (w)>
#plane = affine_map<(n, c, h, w) -> (h, w)>
func.func @se_gate(%x: tensor<?x8x?x?xf32>, %g: tensor<?x8x1x1xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #gate, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<?x8x?x?xf32>, tensor<?x8x1x1xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}

// An [H, W] plane broadcast over N and C is read as a row too.
// CHECK-LABEL: func.func @plane
// CHECK-DAG: tensor.collapse_shape %arg1 {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: arith.addf {{.*}} : vector<1x1x64xf32>
// CHECK: tensor.reshape
func.func @plane(%x: tensor<?x8x?x?xf32>, %p: tensor<?x?xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #plane, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %p : tensor<?x8x?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}

// A bias over W alone reads W but not H: no row, the W loop is vectorized alone.
// CHECK-LABEL: func.func @w_bias
// CHECK-NOT: tensor.collapse_shape
// CHECK: arith.addf {{.*}} : vector<1x1x1x64xf32>
// CHECK: return
func.func @w_bias(%x: tensor<?x8x?x?xf32>, %b: tensor<?xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #wrow, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<?x8x?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    linalg.yield %t : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}

// Static 7x7 maps of a dynamic batch: rows of 7 are short, H joins them (rows of 49).
// CHECK-LABEL: func.func @static_plane
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<?x8x7x7xf32> into tensor<?x8x49xf32>
// CHECK: arith.mulf {{.*}} : vector<1x1x49xf32>
// CHECK: return
func.func @static_plane(%x: tensor<?x8x7x7xf32>, %g: tensor<?x8x1x1xf32>) -> tensor<?x8x7x7xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x7x7xf32>
  %e = tensor.empty(%n) : tensor<?x8x7x7xf32>
  %r = linalg.generic {indexing_maps = [#id, #gate, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<?x8x7x7xf32>, tensor<?x8x1x1xf32>) outs(%e : tensor<?x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8x7x7xf32>
  return %r : tensor<?x8x7x7xf32>
}

// A static row of 100 (over SHORT_ROW) keeps its loops; so does a whole static op.
// CHECK-LABEL: func.func @long_rows
// CHECK-NOT: tensor.collapse_shape
// CHECK: arith.mulf {{.*}} : vector<1x1x1x100xf32>
// CHECK-LABEL: func.func @all_static
// CHECK-NOT: tensor.collapse_shape
// CHECK: arith.mulf {{.*}} : vector<1x1x1x7xf32>
// CHECK: return
func.func @long_rows(%x: tensor<?x8x4x100xf32>, %g: tensor<?x8x1x1xf32>) -> tensor<?x8x4x100xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x4x100xf32>
  %e = tensor.empty(%n) : tensor<?x8x4x100xf32>
  %r = linalg.generic {indexing_maps = [#id, #gate, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<?x8x4x100xf32>, tensor<?x8x1x1xf32>) outs(%e : tensor<?x8x4x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8x4x100xf32>
  return %r : tensor<?x8x4x100xf32>
}
func.func @all_static(%x: tensor<2x8x7x7xf32>, %g: tensor<2x8x1x1xf32>) -> tensor<2x8x7x7xf32> {
  %e = tensor.empty() : tensor<2x8x7x7xf32>
  %r = linalg.generic {indexing_maps = [#id, #gate, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %g : tensor<2x8x7x7xf32>, tensor<2x8x1x1xf32>) outs(%e : tensor<2x8x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<2x8x7x7xf32>
  return %r : tensor<2x8x7x7xf32>
}

// An operand that is a tensor.extract_slice (an Add's run-time broadcast check) is a
// view with run-time strides: collapsing it would copy it, so the op keeps its loops.
// CHECK-LABEL: func.func @sliced
// CHECK-NOT: tensor.collapse_shape
// CHECK: arith.addf {{.*}} : vector<1x1x1x64xf32>
// CHECK: return
func.func @sliced(%x: tensor<?x8x?x?xf32>, %y: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %y, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %y, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %y, %c3 : tensor<?x8x?x?xf32>
  %s = tensor.extract_slice %x[0, 0, 0, 0] [%n, 8, %h, %w] [1, 1, 1, 1] : tensor<?x8x?x?xf32> to tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %y : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}
