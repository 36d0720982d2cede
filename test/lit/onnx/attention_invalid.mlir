// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'att' (Attention): Q head size 8 differs from K head size 4
func.func @f(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x8xf32>) -> !onnx.unknown {
  %0 = "onnx.attention_v23"(%q, %k, %v) {is_causal = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, qk_matmul_output_mode = 0 : si64, resultSegmentSizes = array<i32: 1, 0, 0, 0>, softcap = 0.000000e+00 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x8xf32>) -> !onnx.unknown loc("att")
  return %0 : !onnx.unknown
}
