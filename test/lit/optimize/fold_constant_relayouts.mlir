// RUN: %opt %s --o3-fold-constant-relayouts | FileCheck %s

// Packs, transposes, broadcasts and reshapes of constants are evaluated at
// compile time (weights cost nothing at run time); a pack of an argument stays.
// CHECK-LABEL: func.func @pack_const
// CHECK-NOT: linalg.pack
// CHECK: arith.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[\[}}3.000000e+00, 4.000000e+00], [7.000000e+00, 8.000000e+00]]]]> : tensor<1x2x2x2xf32>
func.func @pack_const() -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %p = linalg.pack %w outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %e : tensor<2x4xf32> -> tensor<1x2x2x2xf32>
  return %p : tensor<1x2x2x2xf32>
}

// Padding value fills the tail; a chain (transpose then pack) folds in one walk.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.pack
// CHECK: arith.constant dense<{{\[\[\[}}1.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00]], {{\[\[}}2.000000e+00, 4.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x1x4xf32>
func.func @chain() -> tensor<2x1x4xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %te = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%te : tensor<2x2xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x1x4xf32>
  %p = linalg.pack %t padding_value(%zero : f32) inner_dims_pos = [1] inner_tiles = [4] into %e : tensor<2x2xf32> -> tensor<2x1x4xf32>
  return %p : tensor<2x1x4xf32>
}

// CHECK-LABEL: func.func @broadcast_const
// CHECK-NOT: linalg.broadcast
// CHECK: arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<3x2xf32>
func.func @broadcast_const() -> tensor<3x2xf32> {
  %w = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %b = linalg.broadcast ins(%w : tensor<2xf32>) outs(%e : tensor<3x2xf32>) dimensions = [0]
  return %b : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @not_const
// CHECK: linalg.pack %arg0
func.func @not_const(%x: tensor<2x4xf32>) -> tensor<1x2x2x2xf32> {
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %p = linalg.pack %x outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [2, 2] into %e : tensor<2x4xf32> -> tensor<1x2x2x2xf32>
  return %p : tensor<1x2x2x2xf32>
}

// dense_resource weights (how the importer stores initializers) fold too.
// CHECK-LABEL: func.func @resource
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
func.func @resource() -> tensor<2x2xf32> {
  %w = arith.constant dense_resource<w0> : tensor<2x2xf32>
  %te = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%te : tensor<2x2xf32>) permutation = [1, 0]
  return %t : tensor<2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F000000400000404000008040"
    }
  }
#-}

// A zero-padded constant (the -O3 kernels pad weights to whole blocks) folds;
// a pad whose widths are not static stays.
// CHECK-LABEL: func.func @pad_const
// CHECK-NOT: tensor.pad
// CHECK: arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<2x3xf32>
func.func @pad_const() -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %p = tensor.pad %w low[0, 0] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<1x2xf32> to tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @pad_dynamic
// CHECK: tensor.pad
func.func @pad_dynamic(%n: index) -> tensor<?x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %p = tensor.pad %w low[0, 0] high[%n, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<1x2xf32> to tensor<?x2xf32>
  return %p : tensor<?x2xf32>
}

// A relayout of a static slice of a constant (a recurrent op's W[d] of
// [D, G*H, I]) folds: the slice is read from the constant; a slice with a
// dynamic offset stays.
// CHECK-LABEL: func.func @transpose_of_slice
// CHECK-NOT: linalg.transpose
// CHECK: arith.constant dense<{{\[\[}}5.000000e+00, 7.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
func.func @transpose_of_slice() -> tensor<2x2xf32> {
  %w = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %s = tensor.extract_slice %w[1, 0, 0] [1, 2, 2] [1, 1, 1] : tensor<2x2x2xf32> to tensor<2x2xf32>
  %te = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x2xf32>) outs(%te : tensor<2x2xf32>) permutation = [1, 0]
  return %t : tensor<2x2xf32>
}

// CHECK-LABEL: func.func @transpose_of_dynamic_slice
// CHECK: tensor.extract_slice
// CHECK: linalg.transpose
func.func @transpose_of_dynamic_slice(%d: index) -> tensor<2x2xf32> {
  %w = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf32>
  %s = tensor.extract_slice %w[%d, 0, 0] [1, 2, 2] [1, 1, 1] : tensor<2x2x2xf32> to tensor<2x2xf32>
  %te = tensor.empty() : tensor<2x2xf32>
  %t = linalg.transpose ins(%s : tensor<2x2xf32>) outs(%te : tensor<2x2xf32>) permutation = [1, 0]
  return %t : tensor<2x2xf32>
}
