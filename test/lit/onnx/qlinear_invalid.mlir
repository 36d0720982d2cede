// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'add_pc' (QLinearAdd): input 'A_scale' has shape [3]: expected a scalar or a 1-D tensor of one element (onnxruntime supports per-tensor quantization only)
func.func @f(%a: tensor<2x3xui8>, %s: tensor<3xf32>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_add"(%a, %s, %z, %a, %t, %z, %t, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>} : (tensor<2x3xui8>, tensor<3xf32>, tensor<ui8>, tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("add_pc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mul_bc' (QLinearMul): inputs are not broadcast-compatible: [2x3] vs [4]
func.func @f(%a: tensor<2x3xi8>, %b: tensor<4xi8>, %t: tensor<f32>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_mul"(%a, %t, %b, %t, %t) {operandSegmentSizes = array<i32: 1, 1, 0, 1, 1, 0, 1, 0>} : (tensor<2x3xi8>, tensor<f32>, tensor<4xi8>, tensor<f32>, tensor<f32>) -> !onnx.unknown loc("mul_bc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gap_rank' (QLinearGlobalAveragePool): input 'X' has shape [2x3]: expected rank >= 3, got rank 2
func.func @f(%x: tensor<2x3xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_global_average_pool"(%x, %t, %z, %t, %z) {channels_last = 0 : si64} : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("gap_rank")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gap_cl' (QLinearGlobalAveragePool): attribute 'channels_last' = 2: expected 0 or 1
func.func @f(%x: tensor<2x3x4x4xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_global_average_pool"(%x, %t, %z, %t, %z) {channels_last = 2 : si64} : (tensor<2x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("gap_cl")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ap_4d' (QLinearAveragePool): 4 spatial axes: onnxruntime's QLinearAveragePool supports 1 to 3
func.func @f(%x: tensor<1x2x3x3x3x3xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_average_pool"(%x, %t, %z, %t, %z) {auto_pad = "NOTSET", ceil_mode = 0 : si64, channels_last = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 2, 2, 2, 2>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x2x3x3x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("ap_4d")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ap_pad' (QLinearAveragePool): attribute 'pads' = [0, 2, 0, 0]: pad 2 of spatial axis 1 is not smaller than the kernel size 2
func.func @f(%x: tensor<1x2x5x5xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_average_pool"(%x, %t, %z, %t, %z) {auto_pad = "NOTSET", ceil_mode = 0 : si64, channels_last = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 2, 0, 0>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("ap_pad")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ap_big' (QLinearAveragePool): spatial axis 0: the padded input size 3 is smaller than the kernel 4: no window fits
func.func @f(%x: tensor<1x3x5x2xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_average_pool"(%x, %t, %z, %t, %z) {auto_pad = "NOTSET", ceil_mode = 0 : si64, channels_last = 1 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 4, 1>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<1x3x5x2xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("ap_big")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'cat_n' (QLinearConcat): expected (X, X_scale, X_zero_point) triples after Y_scale and Y_zero_point, got 4 inputs
func.func @f(%x: tensor<2x3xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_concat"(%t, %z, %x, %t, %z, %x) {axis = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<ui8>, tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<2x3xui8>) -> !onnx.unknown loc("cat_n")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'cat_type' (QLinearConcat): X of input #0 has element type i8, expected ui8 (that of Y_zero_point)
func.func @f(%x: tensor<2x3xi8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_concat"(%t, %z, %x, %t, %z) {axis = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<ui8>, tensor<2x3xi8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("cat_type")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'cat_pc' (QLinearConcat): input 'X_scale of input #0' has shape [3]: expected a scalar or a 1-D tensor of one element (onnxruntime supports per-tensor quantization only)
func.func @f(%x: tensor<2x3xui8>, %s: tensor<3xf32>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_concat"(%t, %z, %x, %s, %z) {axis = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<ui8>, tensor<2x3xui8>, tensor<3xf32>, tensor<ui8>) -> !onnx.unknown loc("cat_pc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sm_axis' (QLinearSoftmax): attribute 'axis' = 2: expected a value in [-2, 1] for input 'X' of rank 2
func.func @f(%x: tensor<2x3xui8>, %t: tensor<f32>, %z: tensor<ui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_softmax"(%x, %t, %z, %t, %z) {axis = 2 : si64, opset = 13 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> !onnx.unknown loc("sm_axis")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'sig_zp' (QLinearSigmoid): input 'Y_zero_point' has shape [2]: expected a scalar or a 1-D tensor of one element (onnxruntime supports per-tensor quantization only)
func.func @f(%x: tensor<2x3xui8>, %t: tensor<f32>, %z: tensor<2xui8>) -> !onnx.unknown {
  %0 = "com_microsoft.q_linear_sigmoid"(%x, %t, %t, %z) {operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>} : (tensor<2x3xui8>, tensor<f32>, tensor<f32>, tensor<2xui8>) -> !onnx.unknown loc("sig_zp")
  return %0 : !onnx.unknown
}
