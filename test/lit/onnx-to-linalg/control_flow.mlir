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

// -----

// Scan v8 (a leading batch dim on every input and output, sequence_lens):
// an scf.for over the batch whose body slices row b of each input, checks
// sequence_lens[b] in [0, T] and runs the v9 loop for that many steps (the
// second scan input read in reverse within them) into zero-filled rows,
// then stacks the rows' final state and scan outputs.
// CHECK-LABEL: func.func @scan_v8
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:   tensor.extract_slice %arg1[%[[B]], 0] [1, 3] [1, 1] : tensor<?x3xf32> to tensor<3xf32>
// CHECK:   %[[N:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:   arith.cmpi sle, %[[N]]
// CHECK:   call @om_check_failed
// CHECK:   linalg.fill
// CHECK:   scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args
// CHECK:     %[[R:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK:     tensor.extract_slice %{{.*}}[%[[R]], 0] [1, 3] [1, 1] : tensor<?x3xf32> to tensor<3xf32>
// CHECK:     arith.mulf
// CHECK:     scf.yield
// CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[%[[B]], 0] [1, 3] [1, 1] : tensor<3xf32> into tensor<?x3xf32>
// CHECK:   scf.yield
func.func @scan_v8(%arg0: tensor<?xi64>, %arg1: tensor<?x3xf32>, %arg2: tensor<?x?x3xf32>, %arg3: tensor<?x?x3xf32>) -> (tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x3xf32>) {
    %0:3 = "onnx.scan_v8"(%arg0, %arg1, %arg2, %arg3) ({
    ^bb0(%arg4: tensor<3xf32>, %arg5: tensor<3xf32>, %arg6: tensor<3xf32>):
      %1 = "onnx.mul"(%arg5, %arg6) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %2 = "onnx.add"(%arg4, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %3 = "onnx.sub"(%arg5, %arg6) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      gpu.yield %2, %2, %3 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
    }) {directions = array<i64: 0, 1>, num_scan_inputs = 2 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?xi64>, tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x3xf32>) -> (tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x3xf32>)
    return %0#0, %0#1, %0#2 : tensor<?x3xf32>, tensor<?x?x3xf32>, tensor<?x?x3xf32>
}
