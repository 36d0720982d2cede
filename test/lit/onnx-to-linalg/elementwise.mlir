// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @add_relu(%arg0: tensor<?x3xf32>, %arg1: tensor<1x3xf32>) -> tensor<?x3xf32>
// CHECK: %[[D:.*]] = tensor.dim %arg0
// CHECK: tensor.empty(%[[D]]) : tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [#map, #map1, #map]
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: onnx.
func.func @add_relu(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = "onnx.add"(%a, %b) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %1 = "onnx.relu"(%0) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @unsigned(%arg0: tensor<4xi8> {onnx.dtype = "uint8", onnx.name = "x"}) -> (tensor<4xi1>, tensor<4xi8> {onnx.dtype = "uint8"})
// CHECK: arith.constant dense<[1, -1, 3, 4]> : tensor<4xi8>
// CHECK: arith.cmpi ult
// CHECK: arith.divui
func.func @unsigned(%x: tensor<4xui8> {onnx.name = "x"}) -> (tensor<4xi1>, tensor<4xui8>) {
  %k = "onnx.constant"() {value = dense<[1, 255, 3, 4]> : tensor<4xui8>} : () -> tensor<4xui8>
  %0 = "onnx.less"(%x, %k) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %1 = "onnx.div"(%x, %k) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0, %1 : tensor<4xi1>, tensor<4xui8>
}

// CHECK-LABEL: func.func @where_cast
// CHECK: arith.select
// CHECK: arith.fptosi {{.*}} : f32 to i64
func.func @where_cast(%c: tensor<2x3xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xi64> {
  %0 = "onnx.where"(%c, %x, %y) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "onnx.cast"(%0) {saturate = 1 : si64, to = 7 : si64, round_mode = "up"} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  return %1 : tensor<2x3xi64>
}
