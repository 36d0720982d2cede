// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK: "onnx.gemm"{{.*}} -> tensor<?x5xf32>
// CHECK: "onnx.gemm_v7"{{.*}} -> tensor<3x5xf32>
func.func @gemm(%a: tensor<?x4xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>, %at: tensor<4x3xf32>, %b2: tensor<4x5xf32>, %c2: tensor<3x1xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.gemm"(%a, %b, %c) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 1 : si64} : (tensor<?x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> !onnx.unknown
  %1 = "onnx.gemm_v7"(%at, %b2, %c2) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 1 : si64, transB = 0 : si64} : (tensor<4x3xf32>, tensor<4x5xf32>, tensor<3x1xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// 1-D promotion and batch broadcasting.
// CHECK-LABEL: func.func @matmul
// CHECK: "onnx.mat_mul"{{.*}} -> tensor<?x5x3x6xf32>
// CHECK: "onnx.mat_mul"{{.*}} -> tensor<5xf32>
// CHECK: "onnx.mat_mul_v9"{{.*}} -> tensor<?x3xf32>
// CHECK: "onnx.mat_mul_v1"{{.*}} -> tensor<f32>
func.func @matmul(%a: tensor<?x1x3x4xf32>, %b: tensor<5x4x6xf32>, %v: tensor<4xf32>, %m: tensor<4x5xf32>, %c: tensor<?x3x4xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<?x1x3x4xf32>, tensor<5x4x6xf32>) -> !onnx.unknown
  %1 = "onnx.mat_mul"(%v, %m) : (tensor<4xf32>, tensor<4x5xf32>) -> !onnx.unknown
  %2 = "onnx.mat_mul_v9"(%c, %v) : (tensor<?x3x4xf32>, tensor<4xf32>) -> !onnx.unknown
  %3 = "onnx.mat_mul_v1"(%v, %v) : (tensor<4xf32>, tensor<4xf32>) -> !onnx.unknown
  return %0, %1, %2, %3 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// CHECK-LABEL: func.func @matmul_integer
// CHECK: "onnx.mat_mul_integer"{{.*}} -> tensor<?x3x5xi32>
func.func @matmul_integer(%a: tensor<?x3x4xui8>, %b: tensor<4x5xi8>, %az: tensor<ui8>, %bz: tensor<5xi8>) -> !onnx.unknown {
  %0 = "onnx.mat_mul_integer"(%a, %b, %az, %bz) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (tensor<?x3x4xui8>, tensor<4x5xi8>, tensor<ui8>, tensor<5xi8>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// Einsum's variadic input is modelled as 64 optional operands.
// CHECK-LABEL: func.func @einsum
// CHECK: "onnx.einsum_v12"{{.*}} -> tensor<?x2x4xf32>
// CHECK: "onnx.einsum_v12"{{.*}} -> tensor<3x2xf32>
func.func @einsum(%a: tensor<?x2x3xf32>, %b: tensor<?x3x4xf32>, %c: tensor<2x3xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.einsum_v12"(%a, %b) {equation = "bij,bjk->bik", operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x2x3xf32>, tensor<?x3x4xf32>) -> !onnx.unknown
  %1 = "onnx.einsum_v12"(%c) {equation = "ij->ji", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<2x3xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
