// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @flatten_dyn
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2, 3]] : tensor<?x8x12x12xf32> into tensor<?x1152xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2, 3]] : tensor<?x8x12x12xf32> into tensor<?x1152xf32>
func.func @flatten_dyn(%x: tensor<?x8x12x12xf32>) -> (tensor<?x1152xf32>, tensor<?x1152xf32>) {
  %s = "onnx.constant"() {value = dense<[-1, 1152]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reshape"(%x, %s) {allowzero = 0 : si64} : (tensor<?x8x12x12xf32>, tensor<2xi64>) -> tensor<?x1152xf32>
  %1 = "onnx.flatten"(%x) {axis = 1 : si64} : (tensor<?x8x12x12xf32>) -> tensor<?x1152xf32>
  return %0, %1 : tensor<?x1152xf32>, tensor<?x1152xf32>
}

// CHECK-LABEL: func.func @shuffle
// CHECK: tensor.reshape
// CHECK: linalg.transpose ins({{.*}} : tensor<2x3x4xf32>) outs({{.*}} : tensor<4x2x3xf32>) permutation = [2, 0, 1]
// CHECK: tensor.expand_shape
func.func @shuffle(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<1x2x3x4xf32>) {
  %s = "onnx.constant"() {value = dense<[4, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  %a = "onnx.constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.reshape"(%x, %s) {allowzero = 0 : si64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %1 = "onnx.transpose"(%x) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %2 = "onnx.unsqueeze"(%x, %a) : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<1x2x3x4xf32>
  return %0, %1, %2 : tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<1x2x3x4xf32>
}

// A dim chosen at run time (0 copies, -1 infers: arith.select) reaches the
// result through an index_cast / index_castui pair, which MLIR's value-bounds
// analysis does not look through: one-shot bufferization compares slice sizes
// with it and split on every select, recursively (LinearAttention fp16 at
// dynamic dims took > 300 s to compile).
// CHECK-LABEL: func.func @runtime_shape
// CHECK: arith.floordivsi
// CHECK-NEXT: %[[SEL:[0-9]+]] = arith.select {{.*}} : index
// CHECK: om_check_failed
// CHECK: %[[I64:[0-9]+]] = arith.index_cast %[[SEL]] : index to i64
// CHECK-NEXT: %[[OPAQUE:[0-9]+]] = arith.index_castui %[[I64]] : i64 to index
// CHECK: tensor.from_elements %[[OPAQUE]],
// CHECK-NEXT: tensor.reshape
func.func @runtime_shape(%x: tensor<?x?xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "onnx.reshape"(%x, %s) {allowzero = 0 : si64} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
