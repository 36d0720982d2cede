// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @gemm
// CHECK: linalg.transpose
// CHECK: linalg.fill
// CHECK: linalg.matmul ins({{.*}} : tensor<?x8xf32>, tensor<8x10xf32>) outs({{.*}} : tensor<?x10xf32>)
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @gemm(%a: tensor<?x8xf32>, %b: tensor<10x8xf32>, %c: tensor<10xf32>) -> tensor<?x10xf32> {
  %0 = "onnx.gemm"(%a, %b, %c) {alpha = 2.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 1 : si64} : (tensor<?x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2], [3]]
// CHECK: linalg.batch_matmul
// CHECK: tensor.expand_shape
func.func @batched(%a: tensor<2x3x4x5xf32>, %b: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// CHECK-LABEL: func.func @broadcast_batch
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
func.func @broadcast_batch(%a: tensor<2x1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}
