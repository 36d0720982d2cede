// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Negative step: a generic reading x[.., 3 + i * -2] (start -1 is 3 on a dim of 4).
// CHECK-LABEL: func.func @slice_neg_step
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 2
// CHECK: %[[M:.*]] = arith.muli %[[I]], %c-2
// CHECK: %[[J:.*]] = arith.addi %[[M]], %c3
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}, %[[J]]]
func.func @slice_neg_step(%x: tensor<?x3x4xf32>) -> tensor<?x3x2xf32> {
  %s = "onnx.constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.constant"() {value = dense<-100> : tensor<1xi64>} : () -> tensor<1xi64>
  %a = "onnx.constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %st = "onnx.constant"() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.slice"(%x, %s, %e, %a, %st) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3x2xf32>
  return %0 : tensor<?x3x2xf32>
}

// Slicing the dynamic dim clamps at run time.
// CHECK-LABEL: func.func @slice_dyn_dim
// CHECK: arith.minsi
// CHECK: arith.ceildivsi
// CHECK: tensor.extract_slice %arg0[%{{.*}}, 0] [%{{.*}}, 3] [1, 1] : tensor<?x3xf32> to tensor<?x3xf32>
func.func @slice_dyn_dim(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %s = "onnx.constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %e = "onnx.constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.slice"(%x, %s, %e) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<?x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
