// RUN: not %opt %s --lower-to-linalg --split-input-file 2>&1 | FileCheck %s

// A ZipMap on a graph output: the output is the score tensor, its labels in
// the result attribute onnx.zipmap (the Python runtime makes the dicts).
// CHECK-LABEL: func.func @main_graph
// CHECK-SAME: -> (tensor<?x2xf32> {onnx.name = "Z", onnx.zipmap = "[3, 4]"})
// CHECK-NOT: zip_map
func.func @main_graph(%s: tensor<?x2xf32>) -> (!onnx.seq<!onnx.map<i64, tensor<f32>>> {onnx.name = "Z"}) {
  %0 = "onnx_ml.zip_map"(%s) {classlabels_int64s = array<i64: 3, 4>} : (tensor<?x2xf32>) -> !onnx.seq<!onnx.map<i64, tensor<f32>>> loc("zm")
  return %0 : !onnx.seq<!onnx.map<i64, tensor<f32>>>
}

// -----
// Anywhere else it is refused, naming the node.
// CHECK: error: node 'zm2' (ZipMap): ZipMap is supported only directly on a graph output
func.func @main_graph(%s: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = "onnx_ml.zip_map"(%s) {classlabels_int64s = array<i64: 3, 4>} : (tensor<?x2xf32>) -> !onnx.seq<!onnx.map<i64, tensor<f32>>> loc("zm2")
  return %s : tensor<?x2xf32>
}
