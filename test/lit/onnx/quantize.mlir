// RUN: %opt %s --shape-inference | FileCheck %s

// Quantization: y has x's shape; QuantizeLinear takes the zero point's type,
// DequantizeLinear (v19+) the scale's.
// CHECK-LABEL: func.func @quant
// CHECK: "onnx.quantize_linear_v23"{{.*}} -> tensor<?x4xui8>
// CHECK: "onnx.dequantize_linear_v23"{{.*}} -> tensor<?x4xf32>
func.func @quant(%x: tensor<?x4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.quantize_linear_v23"(%x, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64, precision = 0 : si64, saturate = 1 : si64} : (tensor<?x4xf32>, tensor<f32>, tensor<ui8>) -> !onnx.unknown
  %1 = "onnx.dequantize_linear_v23"(%0, %s, %z) {axis = 1 : si64, block_size = 0 : si64, output_dtype = 0 : si64} : (!onnx.unknown, tensor<f32>, tensor<ui8>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
