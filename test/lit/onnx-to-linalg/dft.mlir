// RUN: %opt %s --lower-to-linalg | FileCheck %s

// A direct DFT: one generic summing over the signal index, in f64.
// CHECK-LABEL: func.func @dft
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: math.cos
// CHECK: math.sin
// CHECK: arith.addf {{.*}} : f64
// CHECK: arith.truncf
func.func @dft(%x: tensor<2x10x1xf32>) -> tensor<2x10x2xf32> {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x1xf32>) -> tensor<2x10x2xf32>
  return %0 : tensor<2x10x2xf32>
}
