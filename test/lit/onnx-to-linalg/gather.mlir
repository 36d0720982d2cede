// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @gather_elements
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.index_cast
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @gather_elements(%x: tensor<4x5xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %0 = "onnx.gather_elements"(%x, %i) {axis = 1 : si64} : (tensor<4x5xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @gather_nd_batch
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg0
func.func @gather_nd_batch(%x: tensor<2x3x4xf32>, %i: tensor<2x2x1xi64>) -> tensor<2x2x4xf32> {
  %0 = "onnx.gather_nd"(%x, %i) {batch_dims = 1 : si64} : (tensor<2x3x4xf32>, tensor<2x2x1xi64>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// CHECK-LABEL: func.func @scatter_elements_add
// CHECK: scf.for
// CHECK: scf.for {{.*}} iter_args
// CHECK: tensor.extract %arg1
// CHECK: tensor.extract %arg2
// CHECK: arith.addf
// CHECK: tensor.insert
// CHECK: scf.yield
func.func @scatter_elements_add(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = "onnx.scatter_elements"(%x, %i, %u) {axis = 0 : si64, reduction = "add"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @scatter_nd_max
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: tensor.insert
func.func @scatter_nd_max(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "onnx.scatter_nd"(%x, %i, %u) {reduction = "max"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// ranks (ties: lower index first), then a pick by rank
// CHECK-LABEL: func.func @topk
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi ult
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}}outs({{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
func.func @topk(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %k = "onnx.constant"() {value = dense<[2]> : tensor<1xsi64>} : () -> tensor<1xsi64>
  %v, %i = "onnx.top_k"(%x, %k) {axis = -1 : si64, largest = 1 : si64, sorted = 1 : si64} : (tensor<3x5xf32>, tensor<1xsi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// count, allocate (dynamic), fill in order
// CHECK-LABEL: func.func @nonzero
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// CHECK: tensor.empty(%{{.*}}) : tensor<2x?xi64>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: tensor.insert
func.func @nonzero(%x: tensor<3x4xf32>) -> tensor<2x?xi64> {
  %0 = "onnx.non_zero"(%x) : (tensor<3x4xf32>) -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// CHECK-LABEL: func.func @compress_axis
// CHECK: arith.extui
// CHECK: tensor.empty(%{{.*}}) : tensor<4x?xf32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: tensor.extract_slice %arg0
// CHECK: tensor.insert_slice
func.func @compress_axis(%x: tensor<4x5xf32>, %c: tensor<3xi1>) -> tensor<4x?xf32> {
  %0 = "onnx.compress"(%x, %c) {axis = 1 : si64} : (tensor<4x5xf32>, tensor<3xi1>) -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

// CHECK-LABEL: func.func @gather_axis1
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg1 : tensor<2xi64>) outs(%{{.*}} : tensor<?x2x4xf32>)
// CHECK: arith.index_cast
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: tensor.extract %arg0
func.func @gather_axis1(%x: tensor<?x3x4xf32>, %i: tensor<2xi64>) -> tensor<?x2x4xf32> {
  %0 = "onnx.gather"(%x, %i) {axis = 1 : si64} : (tensor<?x3x4xf32>, tensor<2xi64>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}
