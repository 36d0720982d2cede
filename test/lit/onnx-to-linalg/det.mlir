// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Dynamic batch and M: a run-time square check, a copy of the input, then
// per matrix the elimination steps (scf.for): the pivot search (largest
// |a[i, k]|), a row swap when the pivot row is not k (sign flip), the product
// of the pivots, and the elimination guarded by a nonzero pivot.
// CHECK-LABEL: func.func @det_dynamic
// CHECK: %[[R:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[C:.*]] = tensor.dim %arg0, %c2
// CHECK: arith.cmpi eq, %[[R]], %[[C]]
// CHECK: call @om_check_failed
// CHECK: %[[A:.*]] = linalg.copy {{.*}}ins(%arg0 : tensor<?x?x?xf32>)
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} iter_args(%{{.*}} = %[[A]], %{{.*}} = %{{.*}}) -> (tensor<?x?x?xf32>, tensor<?xf32>)
// CHECK: scf.for %[[K:.*]] = {{.*}} -> (tensor<?x?x?xf32>, f32)
// CHECK: scf.for {{.*}} -> (index, f32)
// CHECK: math.absf
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpi ne
// CHECK: scf.if {{.*}} -> (tensor<?x?x?xf32>)
// CHECK: tensor.insert
// CHECK: tensor.insert
// CHECK: arith.negf
// CHECK: arith.mulf
// CHECK: arith.cmpf une
// CHECK: scf.if {{.*}} -> (tensor<?x?x?xf32>)
// CHECK: arith.divf
// CHECK: arith.subf
// CHECK: tensor.insert %{{.*}}[%[[B]]] : tensor<?xf32>
func.func @det_dynamic(%x: tensor<?x?x?xf32>) -> tensor<?xf32> {
  %0 = "onnx.det"(%x) : (tensor<?x?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// f16 computes in f32 (extf before, truncf after); one matrix: a 0-d result.
// CHECK-LABEL: func.func @det_f16
// CHECK-NOT: call @om_check_failed
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.for {{.*}} -> (tensor<3x3xf32>, f32)
// CHECK: tensor.insert %{{.*}}[] : tensor<f32>
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return %{{.*}} : tensor<f16>
func.func @det_f16(%x: tensor<3x3xf16>) -> tensor<f16> {
  %0 = "onnx.det"(%x) : (tensor<3x3xf16>) -> tensor<f16>
  return %0 : tensor<f16>
}
