// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Linear: the update's length is checked against max_seq, the write indices
// against [0, max_seq - seq] (one scan, then a check call), then one
// parallel generic over the cache reads update at j - w[b] where that is
// in [0, seq), else the past cache.
// CHECK-LABEL: func.func @linear
// CHECK: %[[S:.*]] = tensor.dim %arg1, %c2
// CHECK: arith.cmpi sle, %[[S]], %c8
// CHECK: call @om_check_failed
// CHECK: scf.for
// CHECK: arith.maxui
// CHECK: call @om_check_failed
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]{{.*}} ins(%arg2, %arg0 : tensor<2xi64>, tensor<2x3x8x4xf16>)
// CHECK: %[[I:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: arith.cmpi ult, %[[I]], %[[S]]
// CHECK: scf.if
// CHECK: tensor.extract %arg1
// CHECK-NOT: arith.remsi
// CHECK: return
func.func @linear(%c: tensor<2x3x8x4xf16>, %u: tensor<2x3x?x4xf16>, %w: tensor<2xi64>) -> tensor<2x3x8x4xf16> {
  %0 = "onnx.tensor_scatter"(%c, %u, %w) {axis = -2 : si64, mode = "linear"} : (tensor<2x3x8x4xf16>, tensor<2x3x?x4xf16>, tensor<2xi64>) -> tensor<2x3x8x4xf16> loc("ts")
  return %0 : tensor<2x3x8x4xf16>
}

// Circular: no range check of the write indices; a floor modulo max_seq.
// CHECK-LABEL: func.func @circular
// CHECK-NOT: arith.maxui
// CHECK: linalg.generic
// CHECK: arith.remsi %{{.*}}, %c5
// CHECK: arith.select
// CHECK: arith.cmpi ult
// CHECK: tensor.extract %arg1
func.func @circular(%c: tensor<?x5x4xf32>, %u: tensor<?x2x4xf32>, %w: tensor<?xi64>) -> tensor<?x5x4xf32> {
  %0 = "onnx.tensor_scatter"(%c, %u, %w) {axis = 1 : si64, mode = "circular"} : (tensor<?x5x4xf32>, tensor<?x2x4xf32>, tensor<?xi64>) -> tensor<?x5x4xf32>
  return %0 : tensor<?x5x4xf32>
}

// No write_indices: writes at 0; static shapes need no check.
// CHECK-LABEL: func.func @prefill
// CHECK-NOT: om_check_failed
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<1x6x4xf32>)
// CHECK: arith.cmpi ult, %{{.*}}, %c3
// CHECK: tensor.extract %arg1
func.func @prefill(%c: tensor<1x6x4xf32>, %u: tensor<1x3x4xf32>) -> tensor<1x6x4xf32> {
  %0 = "onnx.tensor_scatter"(%c, %u) {axis = -2 : si64, mode = "linear"} : (tensor<1x6x4xf32>, tensor<1x3x4xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}
