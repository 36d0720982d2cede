// RUN: %opt %s --lower-to-linalg | FileCheck %s

// A counter-based generator in arith: splitmix64 of the linear index.
// CHECK-LABEL: func.func @uniform
// CHECK: linalg.generic
// CHECK: arith.shrui
// CHECK: arith.muli {{.*}} : i64
// CHECK: arith.uitofp
func.func @uniform(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "onnx.random_uniform_like"(%x) {high = 1.0 : f32, low = 0.0 : f32, seed = 3.0 : f32} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
