// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'dec' (ImageDecoder): attribute 'pixel_format' = 'YUV': expected one of 'RGB', 'BGR', 'Grayscale'
func.func @f(%x: tensor<?xui8>) -> !onnx.unknown {
  %0 = "onnx.image_decoder"(%x) {pixel_format = "YUV"} : (tensor<?xui8>) -> !onnx.unknown loc("dec")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'dec2' (ImageDecoder): input 'encoded_stream' has shape [2x8]: expected [N] (1-D bytes)
func.func @f(%x: tensor<2x8xui8>) -> !onnx.unknown {
  %0 = "onnx.image_decoder"(%x) {pixel_format = "RGB"} : (tensor<2x8xui8>) -> !onnx.unknown loc("dec2")
  return %0 : !onnx.unknown
}
