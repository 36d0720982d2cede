// RUN: %opt %s --lower-to-linalg | FileCheck %s

// One generic over the result; bilinear: 2x2 taps read with tensor.extract,
// zeros padding masks the taps outside X.
// CHECK-LABEL: func.func @bilinear
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-COUNT-2: tensor.extract %arg1
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: arith.select
// CHECK: linalg.yield
func.func @bilinear(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 0 : si64, mode = "linear", padding_mode = "zeros"} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// nearest rounds half to even
// CHECK-LABEL: func.func @nearest
// CHECK: math.roundeven
func.func @nearest(%x: tensor<?x2x4x4xf32>, %g: tensor<?x3x3x2xf32>) -> tensor<?x2x3x3xf32> {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 1 : si64, mode = "nearest", padding_mode = "border"} : (tensor<?x2x4x4xf32>, tensor<?x3x3x2xf32>) -> tensor<?x2x3x3xf32>
  return %0 : tensor<?x2x3x3xf32>
}
