// RUN: %opt %s --split-input-file --pow-to-mul | FileCheck %s

// Pow(x, 3) -> (x * x) * x: no onnx.pow left (it lowered to a powf call).
// CHECK-LABEL: func.func @cube
// CHECK: %[[S:.*]] = "onnx.mul"(%arg0, %arg0) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[C:.*]] = "onnx.mul"(%[[S]], %arg0)
// CHECK-NOT: onnx.pow
// CHECK: return %[[C]]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @cube(%arg0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = "onnx.constant"() {value = dense<3.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = "onnx.pow"(%arg0, %0) : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}
}

// -----
// Pow(x, 4) -> (x * x) * (x * x); Pow(x, 2.5) stays.
// CHECK-LABEL: func.func @fourth
// CHECK: %[[S:.*]] = "onnx.mul"(%arg0, %arg0)
// CHECK: %[[F:.*]] = "onnx.mul"(%[[S]], %[[S]])
// CHECK: "onnx.pow"(%[[F]], %{{.*}})
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @fourth(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "onnx.constant"() {value = dense<4.000000e+00> : tensor<1xf32>} : () -> tensor<1xf32>
  %1 = "onnx.pow"(%arg0, %0) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %2 = "onnx.constant"() {value = dense<2.500000e+00> : tensor<f32>} : () -> tensor<f32>
  %3 = "onnx.pow"(%1, %2) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
}
