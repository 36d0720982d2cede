// RUN: %opt %s --shape-inference | FileCheck %s

// Attention with only Y and qk_matmul_output: results follow their ONNX slots.
// CHECK-LABEL: func.func @attention
// CHECK: "onnx.attention_v23"{{.*}} -> (tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>)
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0:2 = "onnx.attention_v23"(%q, %k, %v) {is_causal = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, qk_matmul_output_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 1>, softcap = 0.000000e+00 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}
