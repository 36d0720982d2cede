// RUN: %opt %s --sequence-to-tensors | FileCheck %s

// torch's pattern: SplitToSequence with constant sizes, SequenceAt at constant
// positions -> one Split; SequenceLength -> a constant; the sequence ops go.
// CHECK-LABEL: func.func @split_at
// CHECK: %[[P:.*]]:2 = "onnx.split{{.*}}"(%arg0, %{{.*}}) {{.*}} -> (tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK-NOT: onnx.split_to_sequence
// CHECK-NOT: onnx.sequence_at
// CHECK: "onnx.add"(%[[P]]#0, %[[P]]#1)
// CHECK: "onnx.constant"() {value = dense<2> : tensor<i64>}
func.func @split_at(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<i64>) {
  %sp = "onnx.constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %i0 = "onnx.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %i1 = "onnx.constant"() {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %s = "onnx.split_to_sequence"(%x, %sp) {axis = 1 : si64, keepdims = 1 : si64} : (tensor<3x4xf32>, tensor<2xi64>) -> !onnx.seq<tensor<3x2xf32>>
  %a = "onnx.sequence_at"(%s, %i0) : (!onnx.seq<tensor<3x2xf32>>, tensor<i64>) -> tensor<3x2xf32>
  %b = "onnx.sequence_at"(%s, %i1) : (!onnx.seq<tensor<3x2xf32>>, tensor<i64>) -> tensor<3x2xf32>
  %y = "onnx.add"(%a, %b) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %n = "onnx.sequence_length"(%s) : (!onnx.seq<tensor<3x2xf32>>) -> tensor<i64>
  return %y, %n : tensor<3x2xf32>, tensor<i64>
}

// A position out of range is left to the run-time op (which reports it).
// CHECK-LABEL: func.func @out_of_range
// CHECK: "onnx.sequence_at"
func.func @out_of_range(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %sp = "onnx.constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %i = "onnx.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %s = "onnx.split_to_sequence"(%x, %sp) {axis = 1 : si64, keepdims = 1 : si64} : (tensor<3x4xf32>, tensor<2xi64>) -> !onnx.seq<tensor<3x2xf32>>
  %a = "onnx.sequence_at"(%s, %i) : (!onnx.seq<tensor<3x2xf32>>, tensor<i64>) -> tensor<3x2xf32>
  return %a : tensor<3x2xf32>
}
