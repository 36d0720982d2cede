// RUN: %opt %s --lower-to-linalg | FileCheck %s

// LayerNormalization over the last dim: sum -> mean, squared deviations ->
// rsqrt(var + eps), then one generic; Mean / InvStdDev keep a unit dim.
// CHECK-LABEL: func.func @layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x3x8xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK: arith.divf
// CHECK: arith.mulf
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %{{.*}}, %arg1, %arg2 : tensor<?x3x8xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: tensor.expand_shape {{.*}} : tensor<?x3xf32> into tensor<?x3x1xf32>
// CHECK: tensor.expand_shape {{.*}} : tensor<?x3xf32> into tensor<?x3x1xf32>
func.func @layer_norm(%x: tensor<?x3x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>) {
  %0:3 = "onnx.layer_normalization"(%x, %s, %b) {axis = -1 : si64, epsilon = 9.99999974E-6 : f32, resultSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : si64} : (tensor<?x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>)
  return %0#0, %0#1, %0#2 : tensor<?x3x8xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>
}

// Inference Dropout: the input itself and an all-true mask.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: linalg.fill ins(%true{{.*}} : i1) outs(%{{.*}} : tensor<?x4xi1>)
// CHECK: return %arg0, %{{.*}} : tensor<?x4xf32>, tensor<?x4xi1>
func.func @dropout_mask(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %0:2 = "onnx.dropout_v13"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi1>
}
