// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @batchnorm
// CHECK: "onnx.batch_normalization"{{.*}} -> tensor<?x3x4x4xf32>
// CHECK: "onnx.batch_normalization"{{.*}} -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK: "onnx.batch_normalization_v9"{{.*}} -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
func.func @batchnorm(%x: tensor<?x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.batch_normalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, resultSegmentSizes = array<i32: 1, 0, 0>, training_mode = 0 : si64} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> !onnx.unknown
  %1:3 = "onnx.batch_normalization"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, resultSegmentSizes = array<i32: 1, 1, 1>, training_mode = 1 : si64} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  %2:5 = "onnx.batch_normalization_v9"(%x, %s, %b, %m, %v) {epsilon = 1.0e-05 : f32, momentum = 0.9 : f32, resultSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0, %1#1, %2#4 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// CHECK-LABEL: func.func @instancenorm
// CHECK: "onnx.instance_normalization"{{.*}} -> tensor<?x3x?xf32>
func.func @instancenorm(%x: tensor<?x3x?xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> !onnx.unknown {
  %0 = "onnx.instance_normalization"(%x, %s, %b) {epsilon = 1.0e-05 : f32} : (tensor<?x3x?xf32>, tensor<3xf32>, tensor<3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// Mean / InvStdDev: X's shape with the normalized axes set to 1, stash_type element type.
// CHECK-LABEL: func.func @layernorm
// CHECK: "onnx.layer_normalization"{{.*}} -> (tensor<?x5x8xf16>, tensor<?x5x1xf32>, tensor<?x5x1xf32>)
// CHECK: "onnx.layer_normalization"{{.*}} -> (tensor<?x5x8xf16>, tensor<?x1x1xbf16>)
func.func @layernorm(%x: tensor<?x5x8xf16>, %s: tensor<8xf16>, %s2: tensor<5x8xf16>) -> (!onnx.unknown, !onnx.unknown) {
  %0:3 = "onnx.layer_normalization"(%x, %s) {axis = -1 : si64, epsilon = 1.0e-05 : f32, resultSegmentSizes = array<i32: 1, 1, 1>, stash_type = 1 : si64} : (tensor<?x5x8xf16>, tensor<8xf16>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  %1:2 = "onnx.layer_normalization"(%x, %s2) {axis = 1 : si64, epsilon = 1.0e-05 : f32, resultSegmentSizes = array<i32: 1, 1, 0>, stash_type = 16 : si64} : (tensor<?x5x8xf16>, tensor<5x8xf16>) -> (!onnx.unknown, !onnx.unknown)
  return %0#1, %1#1 : !onnx.unknown, !onnx.unknown
}

// CHECK-LABEL: func.func @groupnorm
// CHECK: "onnx.group_normalization"{{.*}} -> tensor<?x6x4x4xf32>
// CHECK: "onnx.group_normalization_v18"{{.*}} -> tensor<?x6x4x4xf32>
func.func @groupnorm(%x: tensor<?x6x4x4xf32>, %s: tensor<6xf32>, %g: tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.group_normalization"(%x, %s, %s) {epsilon = 1.0e-05 : f32, num_groups = 2 : si64, stash_type = 1 : si64} : (tensor<?x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> !onnx.unknown
  %1 = "onnx.group_normalization_v18"(%x, %g, %g) {epsilon = 1.0e-05 : f32, num_groups = 2 : si64} : (tensor<?x6x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
