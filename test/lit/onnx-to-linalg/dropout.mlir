// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Inference Dropout: the input itself and an all-true mask.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: linalg.fill ins(%true{{.*}} : i1) outs(%{{.*}} : tensor<?x4xi1>)
// CHECK: return %arg0, %{{.*}} : tensor<?x4xf32>, tensor<?x4xi1>
func.func @dropout_mask(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %0:2 = "onnx.dropout_v13"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi1>
}
