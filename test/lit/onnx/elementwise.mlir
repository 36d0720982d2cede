// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @broadcast_add
// CHECK: "onnx.add"{{.*}} -> tensor<4x2x3xf32>
// CHECK: "onnx.relu"{{.*}} -> tensor<4x2x3xf32>
// CHECK: "onnx.less"{{.*}} -> tensor<4x2x3xi1>
func.func @broadcast_add(%a: tensor<2x3xf32>, %b: tensor<4x1x3xf32>) -> tensor<*xi1> {
  %0 = "onnx.add"(%a, %b) : (tensor<2x3xf32>, tensor<4x1x3xf32>) -> !onnx.unknown
  %1 = "onnx.relu"(%0) : (!onnx.unknown) -> !onnx.unknown
  %2 = "onnx.less"(%1, %a) : (!onnx.unknown, tensor<2x3xf32>) -> tensor<*xi1>
  return %2 : tensor<*xi1>
}

// CHECK-LABEL: func.func @dynamic_dims
// CHECK: "onnx.mul"{{.*}} -> tensor<?x3xf32>
func.func @dynamic_dims(%a: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> !onnx.unknown {
  %0 = "onnx.mul"(%a, %b) : (tensor<?x3xf32>, tensor<1x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
