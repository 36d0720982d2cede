// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'gs' (GridSample): X has batch size 2 but grid has 3
func.func @f(%x: tensor<2x3x7x8xf32>, %g: tensor<3x5x6x2xf32>) -> !onnx.unknown {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 0 : si64, mode = "linear", padding_mode = "zeros"} : (tensor<2x3x7x8xf32>, tensor<3x5x6x2xf32>) -> !onnx.unknown loc("gs")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gs2' (GridSample): grid's last dim is 3: expected 2 (the spatial rank of X)
func.func @f(%x: tensor<2x3x7x8xf32>, %g: tensor<2x5x6x3xf32>) -> !onnx.unknown {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 0 : si64, mode = "linear", padding_mode = "zeros"} : (tensor<2x3x7x8xf32>, tensor<2x5x6x3xf32>) -> !onnx.unknown loc("gs2")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gs3' (GridSample): padding_mode 'wrap' is not one of zeros, border, reflection
func.func @f(%x: tensor<2x3x7x8xf32>, %g: tensor<2x5x6x2xf32>) -> !onnx.unknown {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 0 : si64, mode = "linear", padding_mode = "wrap"} : (tensor<2x3x7x8xf32>, tensor<2x5x6x2xf32>) -> !onnx.unknown loc("gs3")
  return %0 : !onnx.unknown
}
