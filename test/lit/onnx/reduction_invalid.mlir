// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'rs' (ReduceSum): axes [1, -2] has duplicate entries (rank 3)
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %a = "onnx.constant"() {value = dense<[1, -2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reduce_sum"(%x, %a) {keepdims = 1 : si64, noop_with_empty_axes = 0 : si64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> !onnx.unknown loc("rs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'rm' (ReduceMean): axis 3 is out of range for rank 3 (expected [-3, 2])
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.reduce_mean_v13"(%x) {axes = array<i64: 3>, keepdims = 1 : si64} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("rm")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'am' (ArgMax): axis -4 is out of range for rank 3 (expected [-3, 2])
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.arg_max"(%x) {axis = -4 : si64, keepdims = 1 : si64, select_last_index = 0 : si64} : (tensor<2x3x4xf32>) -> !onnx.unknown loc("am")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'tk' (TopK): k 5 is larger than dim 2 of input [2x3x4]
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %k = "onnx.constant"() {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0:2 = "onnx.top_k"(%x, %k) {axis = -1 : si64, largest = 1 : si64, sorted = 1 : si64} : (tensor<2x3x4xf32>, tensor<1xi64>) -> (!onnx.unknown, !onnx.unknown) loc("tk")
  return %0#0 : !onnx.unknown
}
