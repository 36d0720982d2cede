// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @random
// CHECK: "onnx.random_normal"{{.*}} -> tensor<2x3xf64>
// CHECK: "onnx.multinomial"{{.*}} -> tensor<?x5xi64>
// CHECK: "onnx.bernoulli"{{.*}} -> tensor<?x4xi1>
func.func @random(%x: tensor<?x4xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.random_normal"() {dtype = 11 : si64, mean = 0.0 : f32, scale = 1.0 : f32, shape = array<i64: 2, 3>} : () -> !onnx.unknown
  %1 = "onnx.multinomial"(%x) {dtype = 7 : si64, sample_size = 5 : si64} : (tensor<?x4xf32>) -> !onnx.unknown
  %2 = "onnx.bernoulli"(%x) {dtype = 9 : si64} : (tensor<?x4xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
