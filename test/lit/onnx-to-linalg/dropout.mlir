// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Inference Dropout: the input itself and an all-true mask.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: linalg.fill ins(%true{{.*}} : i1) outs(%{{.*}} : tensor<?x4xi1>)
// CHECK: return %arg0, %{{.*}} : tensor<?x4xf32>, tensor<?x4xi1>
func.func @dropout_mask(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %0:2 = "onnx.dropout_v13"(%x) {operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi1>
}

// Training Dropout, training_mode and ratio known only at run time: the
// ratio checked in [0, 1), one generic drawing u per element (splitmix64 of
// the linear index): kept where u >= ratio (y = x / (1 - ratio), else 0),
// a false training_mode selects x and an all-true mask.
// CHECK-LABEL: func.func @dropout_training
// CHECK: %[[R:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: call @om_check_failed
// CHECK: %[[T:.*]] = tensor.extract %arg2[] : tensor<i1>
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<?x4xf32>) outs(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x4xi1>)
// CHECK: arith.muli {{.*}} : i64
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %{{.*}}, %[[R]] : f64
// CHECK: arith.select %[[KEEP]]
// CHECK: arith.select %[[T]]
// CHECK: linalg.yield
func.func @dropout_training(%x: tensor<?x4xf32>, %r: tensor<f32>, %t: tensor<i1>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %0:2 = "onnx.dropout_v13"(%x, %r, %t) {operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<?x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %0#0, %0#1 : tensor<?x4xf32>, tensor<?x4xi1>
}
