// RUN: %opt %s --lower-to-linalg | FileCheck %s

// A sequence is an !llvm.ptr to a record of the C runtime (om_seq.c): the
// insert hands the tensor's strided view over, the position is normalised
// and range-checked, SequenceAt copies the element into a fresh buffer.
// CHECK-LABEL: func.func @insert_at
// CHECK-SAME: (%[[S:.*]]: !llvm.ptr {{{.*}}onnx.type = "!onnx.seq<tensor<?x3xf32>>"}
// CHECK: call @om_seq_len(%[[S]]) : (!llvm.ptr) -> i64
// CHECK: call @om_check_failed
// CHECK: bufferization.to_buffer %{{.*}} read_only : tensor<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>
// CHECK: memref.extract_strided_metadata
// CHECK: call @om_seq_arg(
// CHECK: call @om_seq_arg_dim(
// CHECK: %[[S2:.*]] = call @om_seq_insert(%[[S]], %{{.*}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: call @om_seq_dim(%[[S2]]
// CHECK: memref.alloc(%{{.*}}) : memref<?x3xf32>
// CHECK: call @om_seq_read(%[[S2]]
// CHECK: bufferization.to_tensor %{{.*}} restrict writable : memref<?x3xf32> to tensor<?x3xf32>
func.func @insert_at(%s: !onnx.seq<tensor<?x3xf32>> {onnx.name = "s"}, %y: tensor<2x3xf32>, %p: tensor<i64>) -> tensor<?x3xf32> {
  %1 = "onnx.sequence_insert"(%s, %y, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<2x3xf32>, tensor<i64>) -> !onnx.seq<tensor<?x3xf32>>
  %2 = "onnx.sequence_at"(%1, %p) : (!onnx.seq<tensor<?x3xf32>>, tensor<i64>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}

// An optional is a record of 0 or 1 elements.
// CHECK-LABEL: func.func @optional
// CHECK: %[[B:.*]] = call @om_seq_new(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: call @om_seq_push(%[[B]])
// CHECK: call @om_seq_len(%[[B]])
// CHECK: arith.cmpi sgt
// CHECK: return %[[B]], %{{.*}} : !llvm.ptr, tensor<i1>
func.func @optional(%x: tensor<?x3xf32>) -> (!onnx.opt<tensor<?x3xf32>>, tensor<i1>) {
  %0 = "onnx.optional_v15"(%x) : (tensor<?x3xf32>) -> !onnx.opt<tensor<?x3xf32>>
  %1 = "onnx.optional_has_element_v18"(%0) : (!onnx.opt<tensor<?x3xf32>>) -> tensor<i1>
  return %0, %1 : !onnx.opt<tensor<?x3xf32>>, tensor<i1>
}
