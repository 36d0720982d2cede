// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'mp_ks' (MaxPool): attribute 'kernel_shape' has 3 values, expected 2 (one per spatial axis)
func.func @f(%x: tensor<1x3x8x8xf32>) -> !onnx.unknown {
  %0 = "onnx.max_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2, 2, 2>, storage_order = 0 : si64} : (tensor<1x3x8x8xf32>) -> !onnx.unknown loc("mp_ks")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mp_rank' (MaxPool): input 'X' has shape [3x8]: expected rank >= 3 (N x C x D1 x ... x Dn), got rank 2
func.func @f(%x: tensor<3x8xf32>) -> !onnx.unknown {
  %0 = "onnx.max_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, kernel_shape = array<i64: 2>, storage_order = 0 : si64} : (tensor<3x8xf32>) -> !onnx.unknown loc("mp_rank")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ap_strides' (AveragePool): attribute 'strides' = [0, 1]: expected values >= 1, got 0
func.func @f(%x: tensor<1x3x8x8xf32>) -> !onnx.unknown {
  %0 = "onnx.average_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>) -> !onnx.unknown loc("ap_strides")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ap_small' (AveragePool): spatial axis 1: padded input size 2 is smaller than the effective kernel size 3; expected input + pads >= (kernel - 1) * dilation + 1
func.func @f(%x: tensor<1x3x8x2xf32>) -> !onnx.unknown {
  %0 = "onnx.average_pool_v11"(%x) {auto_pad = "NOTSET", ceil_mode = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 3, 3>} : (tensor<1x3x8x2xf32>) -> !onnx.unknown loc("ap_small")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mp_ceil_none' (MaxPool): spatial axis 1: padded input size 4 is smaller than the effective kernel size 10 by the stride 3 or more; expected input + pads + stride > (kernel - 1) * dilation + 1 (ceil_mode)
func.func @f(%x: tensor<1x3x4x4xf32>) -> !onnx.unknown {
  %0 = "onnx.max_pool"(%x) {auto_pad = "NOTSET", ceil_mode = 1 : si64, kernel_shape = array<i64: 4, 10>, storage_order = 0 : si64, strides = array<i64: 3, 3>} : (tensor<1x3x4x4xf32>) -> !onnx.unknown loc("mp_ceil_none")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mp_autopad' (MaxPool): attribute 'auto_pad' = 'SAME': expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID
func.func @f(%x: tensor<1x3x8x8xf32>) -> !onnx.unknown {
  %0 = "onnx.max_pool"(%x) {auto_pad = "SAME", ceil_mode = 0 : si64, kernel_shape = array<i64: 2, 2>, storage_order = 0 : si64} : (tensor<1x3x8x8xf32>) -> !onnx.unknown loc("mp_autopad")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gap' (GlobalAveragePool): input 'X' has shape [8]: expected rank >= 2 (N x C x D1 x ... x Dn), got rank 1
func.func @f(%x: tensor<8xf32>) -> !onnx.unknown {
  %0 = "onnx.global_average_pool"(%x) : (tensor<8xf32>) -> !onnx.unknown loc("gap")
  return %0 : !onnx.unknown
}
