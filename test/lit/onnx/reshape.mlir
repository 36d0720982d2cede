// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @reshape
// CHECK: "onnx.reshape"{{.*}} -> tensor<?x12xf32>
// CHECK: "onnx.reshape"{{.*}} -> tensor<4x?x2xf32>
// CHECK: "onnx.reshape"{{.*}} -> tensor<?x?x?xf32>
// CHECK: "onnx.squeeze"{{.*}} -> tensor<1x4xf32>
// CHECK: "onnx.unsqueeze"{{.*}} -> tensor<1x?x3x1x4xf32>
// CHECK: "onnx.expand_v8"{{.*}} -> tensor<5x?x3x4xf32>
// CHECK: "onnx.tile"{{.*}} -> tensor<?x6x4xf32>
// CHECK: "onnx.depth_to_space"{{.*}} -> tensor<1x2x6x8xf32>
func.func @reshape(%x: tensor<?x3x4xf32>, %s: tensor<3xi64>, %y: tensor<1x1x4xf32>, %z: tensor<1x8x3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reshape"(%x, %c) {allowzero = 0 : si64} : (tensor<?x3x4xf32>, tensor<2xi64>) -> !onnx.unknown
  %d = "onnx.constant"() {value = dense<[4, -1, 2]> : tensor<3xi64>} : () -> tensor<3xi64>
  %1 = "onnx.reshape"(%x, %d) {allowzero = 0 : si64} : (tensor<?x3x4xf32>, tensor<3xi64>) -> !onnx.unknown
  %a = "onnx.constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %y2 = "onnx.reshape"(%x, %s) {allowzero = 0 : si64} : (tensor<?x3x4xf32>, tensor<3xi64>) -> !onnx.unknown
  %2 = "onnx.squeeze"(%y, %a) : (tensor<1x1x4xf32>, tensor<1xi64>) -> !onnx.unknown
  %u = "onnx.constant"() {value = dense<[0, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %3 = "onnx.unsqueeze"(%x, %u) : (tensor<?x3x4xf32>, tensor<2xi64>) -> !onnx.unknown
  %e = "onnx.constant"() {value = dense<[5, 1, 1, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %4 = "onnx.expand_v8"(%x, %e) : (tensor<?x3x4xf32>, tensor<4xi64>) -> !onnx.unknown
  %r = "onnx.constant"() {value = dense<[1, 2, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %5 = "onnx.tile"(%x, %r) : (tensor<?x3x4xf32>, tensor<3xi64>) -> !onnx.unknown
  %6 = "onnx.depth_to_space"(%z) {blocksize = 2 : si64, mode = "DCR"} : (tensor<1x8x3x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
