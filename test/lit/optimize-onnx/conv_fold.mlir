// RUN: %opt %s --split-input-file --fold-bn-into-conv | FileCheck %s --check-prefix=BN
// RUN: %opt %s --split-input-file --fold-affine-into-conv | FileCheck %s --check-prefix=AFF

// BatchNormalization after a Conv with constant weights: k = scale / sqrt(var + eps)
// = [2, 1.5]; W' = W * k = [2, 3]; B' = (0 - mean) * k + B = [0, -2.5].
// BN-LABEL: func.func @bn_into_conv
// BN-DAG: "onnx.constant"() {value = dense<[{{\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// BN-DAG: "onnx.constant"() {value = dense<[0.000000e+00, -2.500000e+00]> : tensor<2xf32>}
// BN: %[[Y:.*]] = "onnx.conv_v11"(%arg0, %{{.*}}, %{{.*}}) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// BN-NOT: onnx.batch_normalization
// BN: return %[[Y]]
func.func @bn_into_conv(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[[[1.000000e+00]]], [[[2.000000e+00]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %1 = "onnx.constant"() {value = dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = "onnx.constant"() {value = dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %3 = "onnx.constant"() {value = dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %4 = "onnx.constant"() {value = dense<[7.500000e-01, 3.750000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %5 = "onnx.conv_v11"(%arg0, %0) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %6 = "onnx.batch_normalization"(%5, %1, %2, %3, %4) {epsilon = 2.500000e-01 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 0 : si64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %6 : tensor<1x2x2x2xf32>
}

// -----
// The Conv result has a second reader: folding would change it, so nothing happens.
// BN-LABEL: func.func @bn_conv_two_uses
// BN: "onnx.conv_v11"
// BN: "onnx.batch_normalization"
func.func @bn_conv_two_uses(%arg0: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %0 = "onnx.constant"() {value = dense<[[[[1.000000e+00]]], [[[2.000000e+00]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %1 = "onnx.constant"() {value = dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %5 = "onnx.conv_v11"(%arg0, %0) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %6 = "onnx.batch_normalization"(%5, %1, %1, %1, %1) {epsilon = 2.500000e-01 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 0 : si64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %5, %6 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// -----
// Weights that are not constants cannot be folded.
// BN-LABEL: func.func @bn_weights_not_constant
// BN: "onnx.batch_normalization"
func.func @bn_weights_not_constant(%arg0: tensor<1x1x2x2xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
  %1 = "onnx.constant"() {value = dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %5 = "onnx.conv_v11"(%arg0, %w) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %6 = "onnx.batch_normalization"(%5, %1, %1, %1, %1) {epsilon = 2.500000e-01 : f32, momentum = 0.899999976 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 0 : si64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %6 : tensor<1x2x2x2xf32>
}

// -----
// Conv -> Mul by a per-channel (2x1x1) constant -> Add of a (1x2x1x1) constant
// (constant first): W' = W * [2, 4] = [2, 8]; B' = [1, 2] * [2, 4] + [10, 20] = [12, 28].
// AFF-LABEL: func.func @scale_shift
// AFF-DAG: "onnx.constant"() {value = dense<[{{\[\[\[}}2.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// AFF-DAG: "onnx.constant"() {value = dense<[1.200000e+01, 2.800000e+01]> : tensor<2xf32>}
// AFF: %[[Y:.*]] = "onnx.conv_v11"
// AFF-NOT: onnx.mul
// AFF-NOT: onnx.add
// AFF: return %[[Y]]
func.func @scale_shift(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[[[1.000000e+00]]], [[[2.000000e+00]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %1 = "onnx.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = "onnx.constant"() {value = dense<[[[2.000000e+00]], [[4.000000e+00]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %3 = "onnx.constant"() {value = dense<[[[[1.000000e+01]], [[2.000000e+01]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %4 = "onnx.conv_v11"(%arg0, %0, %1) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %5 = "onnx.mul"(%4, %2) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %6 = "onnx.add"(%3, %5) : (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %6 : tensor<1x2x2x2xf32>
}

// -----
// A constant that varies along a spatial axis is not a per-channel scale: kept.
// AFF-LABEL: func.func @not_per_channel
// AFF: "onnx.conv_v11"
// AFF: "onnx.mul"
func.func @not_per_channel(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[[[1.000000e+00]]], [[[2.000000e+00]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %2 = "onnx.constant"() {value = dense<[[2.000000e+00], [4.000000e+00]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %4 = "onnx.conv_v11"(%arg0, %0) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %5 = "onnx.mul"(%4, %2) : (tensor<1x2x2x2xf32>, tensor<2x1xf32>) -> tensor<1x2x2x2xf32>
  return %5 : tensor<1x2x2x2xf32>
}

// -----
// Div by a per-channel constant with a zero would turn into a multiplication by inf: kept.
// AFF-LABEL: func.func @div_by_zero_kept
// AFF: "onnx.div"
func.func @div_by_zero_kept(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[[[1.000000e+00]]], [[[2.000000e+00]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %2 = "onnx.constant"() {value = dense<[[[0.000000e+00]], [[4.000000e+00]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %4 = "onnx.conv_v11"(%arg0, %0) {auto_pad = "NOTSET", group = 1 : si64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %5 = "onnx.div"(%4, %2) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %5 : tensor<1x2x2x2xf32>
}
