// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @pad_constant
// CHECK: tensor.pad %arg0 low[0, 1] high[2, 0]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: } : tensor<?x4xf32> to tensor<?x5xf32>
func.func @pad_constant(%x: tensor<?x4xf32>, %v: tensor<f32>) -> tensor<?x5xf32> {
  %p = "onnx.constant"() {value = dense<[0, 1, 2, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.pad_v13"(%x, %p, %v) {mode = "constant", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<?x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}

// Reflect: a generic over the result reading the mirrored source index.
// CHECK-LABEL: func.func @pad_reflect
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x9xf32>)
// CHECK: linalg.index 1
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sgt
// CHECK: tensor.extract %arg0
func.func @pad_reflect(%x: tensor<3x5xf32>) -> tensor<3x9xf32> {
  %p = "onnx.constant"() {value = dense<[0, 2, 0, 2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.pad_v13"(%x, %p) {mode = "reflect", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<3x5xf32>, tensor<4xi64>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}

// Negative pads crop with extract_slice.
// CHECK-LABEL: func.func @pad_negative
// CHECK: tensor.extract_slice %arg0[1, 0] [2, 5] [1, 1]
// CHECK: tensor.pad
func.func @pad_negative(%x: tensor<3x5xf32>) -> tensor<2x6xf32> {
  %p = "onnx.constant"() {value = dense<[-1, 1, 0, 0]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "onnx.pad_v13"(%x, %p) {mode = "constant", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<3x5xf32>, tensor<4xi64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
