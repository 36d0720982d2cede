// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Expand reads the broadcast (size-1) input dim at index 0:
// CHECK: affine_map<(d0, d1, d2) -> (d1, 0)>

// CHECK-LABEL: func.func @shape_size
// CHECK: %[[D:.*]] = tensor.dim %arg0, %{{.*}} : tensor<?x3x4xf32>
// CHECK: %[[D64:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK: tensor.from_elements %[[D64]], %{{.*}} : tensor<2xi64>
// CHECK: arith.muli %{{.*}}, %{{.*}} : index
// CHECK: tensor.from_elements %{{.*}} : tensor<i64>
func.func @shape_size(%x: tensor<?x3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %0 = "onnx.shape_v15"(%x) {end = -1 : si64, start = 0 : si64} : (tensor<?x3x4xf32>) -> tensor<2xi64>
  %1 = "onnx.size"(%x) : (tensor<?x3x4xf32>) -> tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}

// CHECK-LABEL: func.func @constant_of_shape
// CHECK: tensor.extract %arg0[%{{.*}}] : tensor<2xi64>
// CHECK: tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xi32>
// CHECK: linalg.fill ins(%{{.*}} : i32)
func.func @constant_of_shape(%s: tensor<2xi64>) -> tensor<?x?xi32> {
  %0 = "onnx.constant_of_shape"(%s) {value = dense<7> : tensor<1xsi32>} : (tensor<2xi64>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}

// CHECK-LABEL: func.func @range
// CHECK: arith.ceildivsi
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.muli
// CHECK: arith.addi
func.func @range(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>) -> tensor<?xi64> {
  %0 = "onnx.range_v11"(%a, %b, %c) : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[IN:.*]], #{{.*}}]{{.*}}ins(%arg0 : tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %s = "onnx.constant"() {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.expand"(%x, %s) : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Tile: an interleaved (repeat, dim) generic, then collapse_shape.
// CHECK-LABEL: func.func @tile
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<?x3xf32>) outs(%{{.*}} : tensor<1x?x2x3xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] : tensor<1x?x2x3xf32> into tensor<?x6xf32>
func.func @tile(%x: tensor<?x3xf32>) -> tensor<?x6xf32> {
  %r = "onnx.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.tile"(%x, %r) : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}
