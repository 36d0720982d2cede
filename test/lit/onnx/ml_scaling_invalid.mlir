// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'sc' (Scaler): attribute scale has 2 values for 3 features
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.scaler"(%x) {offset = array<f32: 1.0>, scale = array<f32: 1.0, 2.0>} : (tensor<?x3xf32>) -> !onnx.unknown loc("sc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'nm' (Normalizer): norm 'L3' is not one of MAX, L1, L2
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.normalizer"(%x) {norm = "L3"} : (tensor<?x3xf32>) -> !onnx.unknown loc("nm")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'im' (Imputer): exactly one of imputed_value_floats and imputed_value_int64s must be given
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.imputer"(%x) {replaced_value_float = 0.0 : f32, replaced_value_int64 = 0 : si64} : (tensor<?x3xf32>) -> !onnx.unknown loc("im")
  return %0 : !onnx.unknown
}
