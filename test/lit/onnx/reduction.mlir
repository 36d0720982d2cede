// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @reduce
// CHECK: "onnx.reduce_sum"{{.*}} -> tensor<2x1x4xf32>
// CHECK: "onnx.reduce_mean"{{.*}} -> tensor<?xf32>
// CHECK: "onnx.reduce_max_v13"{{.*}} -> tensor<1x1x1xf32>
// CHECK: "onnx.reduce_l2"{{.*}} -> tensor<?x?x?xf32>
// CHECK: "onnx.reduce_sum"{{.*}} -> tensor<2x?x4xf32>
// CHECK: "onnx.arg_max"{{.*}} -> tensor<2x?xi64>
// CHECK: "onnx.top_k"{{.*}} -> (tensor<2x?x3xf32>, tensor<2x?x3xi64>)
// CHECK: "onnx.cum_sum"{{.*}} -> tensor<2x?x4xf32>
func.func @reduce(%x: tensor<2x?x4xf32>, %dyn: tensor<2xi64>) -> !onnx.unknown {
  %a = "onnx.constant"() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %b = "onnx.constant"() {value = dense<[0, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reduce_sum"(%x, %a) {keepdims = 1 : si64, noop_with_empty_axes = 0 : si64} : (tensor<2x?x4xf32>, tensor<1xi64>) -> !onnx.unknown
  %1 = "onnx.reduce_mean"(%x, %b) {keepdims = 0 : si64, noop_with_empty_axes = 0 : si64} : (tensor<2x?x4xf32>, tensor<2xi64>) -> !onnx.unknown
  %2 = "onnx.reduce_max_v13"(%x) {keepdims = 1 : si64} : (tensor<2x?x4xf32>) -> !onnx.unknown
  %3 = "onnx.reduce_l2"(%x, %dyn) {keepdims = 1 : si64, noop_with_empty_axes = 0 : si64} : (tensor<2x?x4xf32>, tensor<2xi64>) -> !onnx.unknown
  %4 = "onnx.reduce_sum"(%x) {keepdims = 1 : si64, noop_with_empty_axes = 1 : si64} : (tensor<2x?x4xf32>) -> !onnx.unknown
  %5 = "onnx.arg_max"(%x) {axis = 2 : si64, keepdims = 0 : si64, select_last_index = 0 : si64} : (tensor<2x?x4xf32>) -> !onnx.unknown
  %k = "onnx.constant"() {value = dense<[3]> : tensor<1xi64>} : () -> tensor<1xi64>
  %6:2 = "onnx.top_k"(%x, %k) {axis = -1 : si64, largest = 1 : si64, sorted = 1 : si64} : (tensor<2x?x4xf32>, tensor<1xi64>) -> (!onnx.unknown, !onnx.unknown)
  %c = "onnx.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %7 = "onnx.cum_sum"(%x, %c) {exclusive = 0 : si64, reverse = 0 : si64} : (tensor<2x?x4xf32>, tensor<i64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// A rank only the graph output knows reaches back through ops that keep
// their input's shape (Sqrt, CastLike): ReduceSum with keepdims=0 and axes
// of a run-time length gets rank 2 (dims dynamic); ReduceMax's result, used
// by Shape (not shape-keeping), stays unranked.
// CHECK-LABEL: func.func @rank_from_users
// CHECK: "onnx.reduce_sum"{{.*}} -> tensor<?x?xf32>
// CHECK: "onnx.sqrt"{{.*}} -> tensor<?x?xf32>
// CHECK: "onnx.cast_like_v15"{{.*}} -> tensor<?x?xf32>
// CHECK: "onnx.reduce_max"{{.*}} -> tensor<*xf32>
func.func @rank_from_users(%x: tensor<?x?x?xf32>, %a: tensor<?xi64>) -> (tensor<?x?xf32>, !onnx.unknown) {
  %0 = "onnx.reduce_sum"(%x, %a) {keepdims = 0 : si64, noop_with_empty_axes = 0 : si64} : (tensor<?x?x?xf32>, tensor<?xi64>) -> !onnx.unknown
  %1 = "onnx.sqrt"(%0) : (!onnx.unknown) -> !onnx.unknown
  %2 = "onnx.cast_like_v15"(%1, %x) : (!onnx.unknown, tensor<?x?x?xf32>) -> tensor<?x?xf32>
  %3 = "onnx.reduce_max"(%x, %a) {keepdims = 0 : si64, noop_with_empty_axes = 0 : si64} : (tensor<?x?x?xf32>, tensor<?xi64>) -> !onnx.unknown
  %4 = "onnx.shape"(%3) {start = 0 : si64} : (!onnx.unknown) -> !onnx.unknown
  return %2, %4 : tensor<?x?xf32>, !onnx.unknown
}
