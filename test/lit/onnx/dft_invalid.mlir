// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'd' (DFT): input has shape [2x10x3]: the last dim must be 1 (real) or 2 (complex)
func.func @f(%x: tensor<2x10x3xf32>) -> !onnx.unknown {
  %0 = "onnx.dft_v17"(%x) {axis = 1 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x3xf32>) -> !onnx.unknown loc("d")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'd2' (DFT): axis 2 is the complex dim of the signal (rank 3)
func.func @f(%x: tensor<2x10x2xf32>) -> !onnx.unknown {
  %0 = "onnx.dft_v17"(%x) {axis = 2 : si64, inverse = 0 : si64, onesided = 0 : si64} : (tensor<2x10x2xf32>) -> !onnx.unknown loc("d2")
  return %0 : !onnx.unknown
}
