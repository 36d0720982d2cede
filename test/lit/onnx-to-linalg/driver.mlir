// RUN: not %opt %s --lower-to-linalg | FileCheck %s

// All missing lowerings are listed at once, and nothing was lowered
// (string tensors have no lowering).
// CHECK: error: 2 unsupported op type(s) (no lowering): StringConcat (nodes: {{.*}}); StringNormalizer (nodes: {{.*}})
// CHECK-NOT: linalg
func.func @f(%s: tensor<2x!onnx.string>, %x: tensor<2xf32>) -> (tensor<2x!onnx.string>, tensor<2xf32>) {
  %0 = "onnx.string_normalizer"(%s) {case_change_action = "NONE", is_case_sensitive = 0 : si64} : (tensor<2x!onnx.string>) -> tensor<?x!onnx.string>
  %1 = "onnx.string_concat"(%0, %s) : (tensor<?x!onnx.string>, tensor<2x!onnx.string>) -> tensor<2x!onnx.string>
  %2 = "onnx.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %1, %2 : tensor<2x!onnx.string>, tensor<2xf32>
}
