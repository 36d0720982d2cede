// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'zm' (ZipMap): X has shape [?x3]: expected [N, 2] (one score per label)
func.func @f(%x: tensor<?x3xf32>) -> !onnx.seq<!onnx.map<i64, tensor<f32>>> {
  %0 = "onnx_ml.zip_map"(%x) {classlabels_int64s = array<i64: 3, 4>} : (tensor<?x3xf32>) -> !onnx.seq<!onnx.map<i64, tensor<f32>>> loc("zm")
  return %0 : !onnx.seq<!onnx.map<i64, tensor<f32>>>
}
