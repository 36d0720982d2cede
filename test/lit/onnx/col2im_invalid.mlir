// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'c' (Col2Im): image_shape and block_shape have different lengths (2 and 3)
func.func @f(%x: tensor<1x8x9xf32>, %i: tensor<2xi64>, %b: tensor<3xi64>) -> !onnx.unknown {
  %0 = "onnx.col2_im"(%x, %i, %b) : (tensor<1x8x9xf32>, tensor<2xi64>, tensor<3xi64>) -> !onnx.unknown loc("c")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'c2' (Col2Im): input dim 2 is 4: expected 5 block positions
func.func @f(%x: tensor<1x5x4xf32>) -> !onnx.unknown {
  %ic = "onnx.constant"() {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %bc = "onnx.constant"() {value = dense<[1, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.col2_im"(%x, %ic, %bc) : (tensor<1x5x4xf32>, tensor<2xi64>, tensor<2xi64>) -> !onnx.unknown loc("c2")
  return %0 : !onnx.unknown
}
