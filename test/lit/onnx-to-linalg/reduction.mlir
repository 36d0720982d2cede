// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @reduce_mean_keepdims
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x3x4xf32>) outs(%{{.*}} : tensor<?x3xf32>)
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 3, 1] : tensor<?x3xf32> into tensor<?x3x1xf32>
func.func @reduce_mean_keepdims(%x: tensor<?x3x4xf32>) -> tensor<?x3x1xf32> {
  %a = "onnx.constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = "onnx.reduce_mean"(%x, %a) {keepdims = 1 : si64, noop_with_empty_axes = 0 : si64} : (tensor<?x3x4xf32>, tensor<1xi64>) -> tensor<?x3x1xf32>
  return %0 : tensor<?x3x1xf32>
}

// ReduceLogSumExp is max-shifted: a max reduction, then sum(exp(x - max)).
// CHECK-LABEL: func.func @reduce_log_sum_exp
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.log
func.func @reduce_log_sum_exp(%x: tensor<2x5xf32>) -> tensor<2xf32> {
  %0 = "onnx.reduce_log_sum_exp_v13"(%x) {axes = [1], keepdims = 0 : si64} : (tensor<2x5xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Integer ReduceL2 computes in f64 (sitofp), then truncates and saturates
// (fptosi of a value selected into range, the type's max / min selected).
// CHECK-LABEL: func.func @reduce_l2_int
// CHECK: arith.sitofp %{{.*}} : i32 to f64
// CHECK: arith.mulf
// CHECK: math.sqrt
// CHECK: arith.cmpf ult
// CHECK: arith.cmpf oge
// CHECK: arith.fptosi %{{.*}} : f64 to i32
func.func @reduce_l2_int(%x: tensor<2x5xi32>) -> tensor<2xi32> {
  %0 = "onnx.reduce_l2_v13"(%x) {axes = [1], keepdims = 0 : si64} : (tensor<2x5xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// ArgMax: one reduction with two outputs (value, index); select_last_index -> oge.
// CHECK-LABEL: func.func @argmax_last
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<?x3xf32>, tensor<?x3xi64>)
// CHECK: arith.cmpf oge
// CHECK: linalg.index 2
func.func @argmax_last(%x: tensor<?x3x4xf32>) -> tensor<?x3xi64> {
  %0 = "onnx.arg_max"(%x) {axis = 2 : si64, keepdims = 0 : si64, select_last_index = 1 : si64} : (tensor<?x3x4xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// CumSum: (result dims, j) with j reduced; exclusive -> j < i.
// CHECK-LABEL: func.func @cumsum_exclusive
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpi ult
// CHECK: arith.select
func.func @cumsum_exclusive(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %a = "onnx.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %0 = "onnx.cum_sum"(%x, %a) {exclusive = 1 : si64, reverse = 0 : si64} : (tensor<2x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
