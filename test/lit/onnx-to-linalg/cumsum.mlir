// RUN: %opt %s --lower-to-linalg | FileCheck %s

// A constant axis: one generic reading x along the j loop, multiplying.
// CHECK-LABEL: func.func @cumprod
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpi ult
// CHECK: arith.mulf
func.func @cumprod(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = "onnx.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.cum_prod"(%x, %a) {exclusive = 1 : si64, reverse = 0 : si64} : (tensor<2x3xf32>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// A run-time axis: range-checked, then picked in the body.
// CHECK-LABEL: func.func @runtime_axis
// CHECK: tensor.extract %arg1
// CHECK: call @{{.*}}check
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0
// CHECK: arith.addi
func.func @runtime_axis(%x: tensor<?x4xi32>, %a: tensor<i64>) -> tensor<?x4xi32> {
  %0 = "onnx.cum_sum"(%x, %a) {exclusive = 0 : si64, reverse = 1 : si64} : (tensor<?x4xi32>, tensor<i64>) -> tensor<?x4xi32>
  return %0 : tensor<?x4xi32>
}
