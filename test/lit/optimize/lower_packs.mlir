// RUN: %opt %s --o3-lower-packs | FileCheck %s

// Run-time packs/unpacks (activations) become pad/reshape/transpose, which bufferize.
// CHECK-LABEL: func.func @pack_unpack
// CHECK-NOT: linalg.pack
// CHECK: tensor.pad
// CHECK: tensor.expand_shape {{.*}} into tensor<2x8x2x8xf32>
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1, 3]
// CHECK-NOT: linalg.unpack
// CHECK: linalg.transpose
// CHECK: tensor.collapse_shape
// CHECK: tensor.extract_slice {{.*}} [13, 16]
func.func @pack_unpack(%x: tensor<13x16xf32>) -> tensor<13x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x8x8xf32>
  %p = linalg.pack %x padding_value(%zero : f32) inner_dims_pos = [0, 1] inner_tiles = [8, 8] into %e : tensor<13x16xf32> -> tensor<2x2x8x8xf32>
  %o = tensor.empty() : tensor<13x16xf32>
  %u = linalg.unpack %p inner_dims_pos = [0, 1] inner_tiles = [8, 8] into %o : tensor<2x2x8x8xf32> -> tensor<13x16xf32>
  return %u : tensor<13x16xf32>
}
