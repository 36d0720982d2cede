// RUN: %opt %s --shape-inference | FileCheck %s

// If: the branches (else_branch is region 0, then_branch region 1) agree on
// rank 2 and dim 0: the result keeps what they agree on.
// CHECK-LABEL: func.func @if_merge
// CHECK: "onnx.if_v16"
// CHECK: }) {{.*}} : (tensor<i1>) -> tensor<2x?xf32>
func.func @if_merge(%c: tensor<i1>, %a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> !onnx.unknown {
  %0 = "onnx.if_v16"(%c) ({
    gpu.yield %b : tensor<2x4xf32>
  }, {
    gpu.yield %a : tensor<2x3xf32>
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<i1>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// If with a constant condition: the taken branch (then = region 1) replaces it.
// CHECK-LABEL: func.func @if_const
// CHECK-NOT: onnx.if
// CHECK: return %arg0 : tensor<2x3xf32>
func.func @if_const(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> !onnx.unknown {
  %c = "onnx.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %0 = "onnx.if_v16"(%c) ({
    gpu.yield %b : tensor<4xf32>
  }, {
    gpu.yield %a : tensor<2x3xf32>
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<i1>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
