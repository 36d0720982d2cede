// RUN: %opt %s --shape-inference | FileCheck %s

// Element types and shapes of sequence values (dialects/onnx/ops/sequence.py).
// CHECK-LABEL: func.func @sequences
// CHECK: "onnx.sequence_construct"{{.*}} -> !onnx.seq<tensor<?x3xf32>>
// CHECK: "onnx.sequence_insert"{{.*}} -> !onnx.seq<tensor<?x3xf32>>
// CHECK: "onnx.sequence_at"{{.*}} -> tensor<?x3xf32>
// CHECK: "onnx.sequence_length"{{.*}} -> tensor<i64>
// CHECK: "onnx.concat_from_sequence"{{.*}} -> tensor<?x3xf32>
// CHECK: "onnx.concat_from_sequence"{{.*}} -> tensor<?x?x3xf32>
// CHECK: "onnx.sequence_erase"{{.*}} -> !onnx.seq<tensor<?x3xf32>>
func.func @sequences(%x: tensor<?x3xf32>, %y: tensor<2x3xf32>, %p: tensor<i64>, %s: !onnx.seq<tensor<?x3xf32>>) -> (!onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>, !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.seq<tensor<*xf32>>) {
  %0 = "onnx.sequence_construct"(%x, %y) {operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x3xf32>, tensor<2x3xf32>) -> !onnx.seq<tensor<*xf32>>
  %1 = "onnx.sequence_insert"(%s, %y, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !onnx.seq<tensor<*xf32>>
  %2 = "onnx.sequence_at"(%s, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> !onnx.unknown
  %3 = "onnx.sequence_length"(%s) : (!onnx.seq<tensor<?x3xf32>>) -> !onnx.unknown
  %4 = "onnx.concat_from_sequence"(%s) {axis = 0 : si64, new_axis = 0 : si64} : (!onnx.seq<tensor<?x3xf32>>) -> !onnx.unknown
  %5 = "onnx.concat_from_sequence"(%s) {axis = 0 : si64, new_axis = 1 : si64} : (!onnx.seq<tensor<?x3xf32>>) -> !onnx.unknown
  %6 = "onnx.sequence_erase"(%s, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> !onnx.seq<tensor<*xf32>>
  return %0, %1, %2, %3, %4, %5, %6 : !onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>, !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.seq<tensor<*xf32>>
}

// SplitToSequence: pieces of 1 (keepdims 0 drops the axis), run-time sizes.
// CHECK-LABEL: func.func @split
// CHECK: "onnx.split_to_sequence_v11"{{.*}} -> !onnx.seq<tensor<4xf32>>
// CHECK: "onnx.split_to_sequence_v11"{{.*}} -> !onnx.seq<tensor<1x4xf32>>
// CHECK: "onnx.split_to_sequence_v11"{{.*}} -> !onnx.seq<tensor<?x4xf32>>
func.func @split(%x: tensor<6x4xf32>, %s: tensor<2xi64>) -> (!onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>) {
  %0 = "onnx.split_to_sequence_v11"(%x) {axis = 0 : si64, keepdims = 0 : si64} : (tensor<6x4xf32>) -> !onnx.seq<tensor<*xf32>>
  %1 = "onnx.split_to_sequence_v11"(%x) {axis = 0 : si64, keepdims = 1 : si64} : (tensor<6x4xf32>) -> !onnx.seq<tensor<*xf32>>
  %2 = "onnx.split_to_sequence_v11"(%x, %s) {axis = 0 : si64, keepdims = 1 : si64} : (tensor<6x4xf32>, tensor<2xi64>) -> !onnx.seq<tensor<*xf32>>
  return %0, %1, %2 : !onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>, !onnx.seq<tensor<*xf32>>
}

// Optionals: of a tensor; has / get element.
// CHECK-LABEL: func.func @optionals
// CHECK: "onnx.optional_v15"{{.*}} -> !onnx.opt<tensor<?x3xf32>>
// CHECK: "onnx.optional_has_element_v18"{{.*}} -> tensor<i1>
// CHECK: "onnx.optional_get_element_v18"{{.*}} -> tensor<?x3xf32>
func.func @optionals(%x: tensor<?x3xf32>, %o: !onnx.opt<tensor<?x3xf32>>) -> (!onnx.opt<tensor<*xf32>>, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.optional_v15"(%x) : (tensor<?x3xf32>) -> !onnx.opt<tensor<*xf32>>
  %1 = "onnx.optional_has_element_v18"(%o) : (!onnx.opt<tensor<?x3xf32>>) -> !onnx.unknown
  %2 = "onnx.optional_get_element_v18"(%o) : (!onnx.opt<tensor<?x3xf32>>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.opt<tensor<*xf32>>, !onnx.unknown, !onnx.unknown
}
