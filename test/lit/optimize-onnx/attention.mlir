// RUN: %opt %s --split-input-file --fuse-attention | FileCheck %s

// The torch pattern: MatMul(Q, KT) / c + mask -> Softmax -> MatMul(P, V)
// becomes Attention (scale 1/c) on K = Transpose(KT), marked NaN-rows.
// CHECK-LABEL: func.func @sdpa
// CHECK: %[[K:.*]] = "onnx.transpose_v13"(%arg1) {perm = array<i64: 0, 1, 3, 2>} : (tensor<?x2x8x?xf32>) -> tensor<?x2x?x8xf32>
// CHECK: "onnx.attention_v23"(%arg0, %[[K]], %arg2, %arg3) {{{.*}}om.softmax_nan_rows{{.*}}scale = 2.500000e-01 : f32{{.*}}} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x16xf32>, tensor<?x?xf32>) -> tensor<?x2x?x16xf32>
// CHECK-NOT: onnx.softmax
// CHECK-NOT: onnx.mat_mul
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @sdpa(%q: tensor<?x2x?x8xf32>, %kt: tensor<?x2x8x?xf32>, %v: tensor<?x2x?x16xf32>, %m: tensor<?x?xf32>) -> tensor<?x2x?x16xf32> {
  %c = "onnx.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %s = "onnx.mat_mul"(%q, %kt) : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %d = "onnx.div"(%s, %c) : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %a = "onnx.add"(%d, %m) : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
  %p = "onnx.softmax"(%a) {axis = -1 : si64} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %y = "onnx.mat_mul"(%p, %v) : (tensor<?x2x?x?xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  return %y : tensor<?x2x?x16xf32>
}
}

// -----
// Scores used twice (also returned), and a softmax over another axis: kept.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: onnx.attention
// CHECK: onnx.softmax
// CHECK: onnx.softmax
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @not_fused(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) {
  %s = "onnx.mat_mul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = "onnx.softmax"(%s) {axis = -1 : si64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = "onnx.mat_mul"(%p, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = "onnx.mat_mul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p2 = "onnx.softmax"(%s2) {axis = 2 : si64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y2 = "onnx.mat_mul"(%p2, %v) : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %y, %s, %y2 : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>
}
}

// -----
// transformers' causal form: Where(allow, S / 8, finfo.min) + pad: the mask
// becomes Where(allow, 0, fill) + pad, one Attention.
// CHECK-LABEL: func.func @where_causal
// CHECK: %[[W:.*]] = "onnx.where"(%arg3, %{{.*}}, %{{.*}}) : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x?x?xf32>
// CHECK: %[[M:.*]] = "onnx.add"(%[[W]], %arg4) : (tensor<1x1x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x1x?x?xf32>
// CHECK: "onnx.attention_v23"(%arg0, %{{.*}}, %arg2, %[[M]]) {{.*}}scale = 1.250000e-01 : f32
// CHECK-NOT: onnx.softmax
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @where_causal(%q: tensor<?x2x?x8xf32>, %kt: tensor<?x2x8x?xf32>, %v: tensor<?x2x?x8xf32>, %allow: tensor<1x1x?x?xi1>, %pad: tensor<?x1x1x?xf32>) -> tensor<?x2x?x8xf32> {
  %c = "onnx.constant"() {value = dense<8.0> : tensor<f32>} : () -> tensor<f32>
  %f = "onnx.constant"() {value = dense<-3.40282347E+38> : tensor<f32>} : () -> tensor<f32>
  %s = "onnx.mat_mul"(%q, %kt) : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %d = "onnx.div"(%s, %c) : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %w = "onnx.where"(%allow, %d, %f) : (tensor<1x1x?x?xi1>, tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %a = "onnx.add"(%w, %pad) : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
  %p = "onnx.softmax"(%a) {axis = -1 : si64} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %y = "onnx.mat_mul"(%p, %v) : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %y : tensor<?x2x?x8xf32>
}
}
