// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'r0' (Reshape): cannot reshape input [2x3x4] (24 elements) to [5x5] (25 elements)
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reshape"(%x, %c) {allowzero = 0 : si64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> !onnx.unknown loc("r0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'r1' (Reshape): shape [-1, 2, -1] has more than one -1
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[-1, 2, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.reshape"(%x, %c) {allowzero = 0 : si64} : (tensor<2x3x4xf32>, tensor<3xi64>) -> !onnx.unknown loc("r1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'r2' (Reshape): cannot reshape input [2x3x4] to [5, -1]: 24 elements are not divisible by 5
func.func @f(%x: tensor<2x3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[5, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reshape"(%x, %c) {allowzero = 0 : si64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> !onnx.unknown loc("r2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sq' (Squeeze): cannot squeeze axis 1: dim is 3, not 1
func.func @f(%x: tensor<1x3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.squeeze"(%x, %c) : (tensor<1x3x4xf32>, tensor<1xi64>) -> !onnx.unknown loc("sq")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'us' (Unsqueeze): axes [0, -4] has duplicate entries (rank 4)
func.func @f(%x: tensor<3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[0, -4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.unsqueeze"(%x, %c) : (tensor<3x4xf32>, tensor<2xi64>) -> !onnx.unknown loc("us")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ex' (Expand): input [3x4] cannot be expanded to shape [2, 5]: dim 0 of the result is 3 vs 2
func.func @f(%x: tensor<3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[2, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.expand"(%x, %c) : (tensor<3x4xf32>, tensor<2xi64>) -> !onnx.unknown loc("ex")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ti' (Tile): repeats has 3 elements, expected one per input dim (input [3x4] has rank 2)
func.func @f(%x: tensor<3x4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<[2, 5, 1]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = "onnx.tile"(%x, %c) : (tensor<3x4xf32>, tensor<3xi64>) -> !onnx.unknown loc("ti")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd2s' (DepthToSpace): channel dim 6 is not divisible by 4
func.func @f(%x: tensor<1x6x3x4xf32>) -> !onnx.unknown {
  %0 = "onnx.depth_to_space"(%x) {blocksize = 2 : si64, mode = "DCR"} : (tensor<1x6x3x4xf32>) -> !onnx.unknown loc("d2s")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'tr' (Trilu): input must have rank >= 2, got rank 1
func.func @f(%x: tensor<4xf32>) -> !onnx.unknown {
  %0 = "onnx.trilu"(%x) {upper = 1 : si64} : (tensor<4xf32>) -> !onnx.unknown loc("tr")
  return %0 : !onnx.unknown
}
