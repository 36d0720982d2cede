// RUN: %opt %s --lower-to-linalg | FileCheck %s

// One generic: result dims parallel, the block position a reduction.
// CHECK-LABEL: func.func @col2im
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.floordivsi
// CHECK: tensor.extract %arg0
// CHECK: arith.addf
func.func @col2im(%x: tensor<1x10x5xf32>) -> tensor<1x2x5x5xf32> {
  %ic = "onnx.constant"() {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %bc = "onnx.constant"() {value = dense<[1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.col2_im"(%x, %ic, %bc) : (tensor<1x10x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x5x5xf32>
  return %0 : tensor<1x2x5x5xf32>
}
