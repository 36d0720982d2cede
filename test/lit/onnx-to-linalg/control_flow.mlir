// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// If: then_branch is region #1 of onnx.if (regions follow the attribute
// names: else_branch, then_branch), and becomes the "then" of scf.if.
// CHECK-LABEL: func.func @if_select
// CHECK: %[[C:.*]] = tensor.extract %arg0[] : tensor<i1>
// CHECK: scf.if %[[C]] -> (tensor<2xf32>) {
// CHECK:   math.exp
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   arith.negf
// CHECK:   scf.yield
// CHECK-NOT: gpu.yield
func.func @if_select(%c: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "onnx.if"(%c) ({
    %1 = "onnx.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    gpu.yield %1 : tensor<2xf32>
  }, {
    %1 = "onnx.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    gpu.yield %1 : tensor<2xf32>
  }) {resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Loop with a trip count, one carried value and one scan output: a
// scf.while carrying (iteration, condition, state, scan accumulator).
// CHECK-LABEL: func.func @loop_scan
// CHECK: %[[ACC:.*]] = tensor.empty(%{{.*}}) : tensor<?x2xf32>
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %arg1, %{{.*}} = %arg2, %{{.*}} = %[[ACC]]) : (tensor<i64>, tensor<i1>, tensor<2xf32>, tensor<?x2xf32>)
// CHECK:   arith.cmpi slt
// CHECK:   arith.andi
// CHECK:   scf.condition
// CHECK: } do {
// CHECK:   arith.addf
// CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<?x2xf32>
// CHECK:   scf.yield
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [%{{.*}}, 2] [1, 1] : tensor<?x2xf32> to tensor<?x2xf32>
func.func @loop_scan(%m: tensor<i64>, %c: tensor<i1>, %s: tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) {
  %0:2 = "onnx.loop"(%m, %c, %s) ({
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %si: tensor<2xf32>):
    %1 = "onnx.add"(%si, %si) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    gpu.yield %ci, %1, %1 : tensor<i1>, tensor<2xf32>, tensor<2xf32>
  }) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<?x2xf32>
}

// -----

// Scan: an scf.for over the scan axis; the reverse input is read at
// (steps - 1 - i).
// CHECK-LABEL: func.func @scan_reverse
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:   %[[R:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK:   tensor.extract_slice %arg1[%[[R]], 0] [1, 2] [1, 1] : tensor<3x2xf32> to tensor<2xf32>
// CHECK:   arith.addf
// CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<3x2xf32>
// CHECK:   scf.yield
func.func @scan_reverse(%init: tensor<2xf32>, %x: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>) {
  %0:2 = "onnx.scan"(%init, %x) ({
  ^bb0(%a: tensor<2xf32>, %xt: tensor<2xf32>):
    %1 = "onnx.add"(%a, %xt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    gpu.yield %1, %1 : tensor<2xf32>, tensor<2xf32>
  }) {num_scan_inputs = 1 : si64, scan_input_directions = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2xf32>, tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3x2xf32>
}
