// RUN: %opt %s --split-input-file --fuse-matmul-bias | FileCheck %s

// 2-D A: MatMul + Add(bias) -> Gemm(A, B, bias) with alpha = beta = 1.
// CHECK-LABEL: func.func @matmul_2d
// CHECK: %[[G:.*]] = "onnx.gemm"(%arg0, %{{.*}}, %{{.*}}) {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
// CHECK-NOT: onnx.mat_mul
// CHECK-NOT: onnx.add
// CHECK: return %[[G]]
module attributes {onnx.opset_import = {ai.onnx = 17 : i64}} {
func.func @matmul_2d(%arg0: tensor<4x3xf32>) -> tensor<4x5xf32> {
  %0 = "onnx.constant"() {value = dense<1.000000e+00> : tensor<3x5xf32>} : () -> tensor<3x5xf32>
  %1 = "onnx.constant"() {value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<5xf32>} : () -> tensor<5xf32>
  %2 = "onnx.mat_mul"(%arg0, %0) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %3 = "onnx.add"(%2, %1) : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %3 : tensor<4x5xf32>
}
}

// -----
// N-D A (bias first, shaped 1x1x5): Reshape to (8, 3), Gemm with the bias as (5,), Reshape back.
// CHECK-LABEL: func.func @matmul_3d
// CHECK: %[[C:.*]] = "onnx.constant"() {value = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<5xf32>}
// CHECK: "onnx.constant"() {value = dense<[8, 3]> : tensor<2xi64>}
// CHECK: %[[A:.*]] = "onnx.reshape_v14"(%arg0, %{{.*}}) {allowzero = 0 : si64} : (tensor<2x4x3xf32>, tensor<2xi64>) -> tensor<8x3xf32>
// CHECK: %[[G:.*]] = "onnx.gemm"(%[[A]], %{{.*}}, %[[C]]) {{.*}} : (tensor<8x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
// CHECK: "onnx.constant"() {value = dense<[2, 4, 5]> : tensor<3xi64>}
// CHECK: %[[Y:.*]] = "onnx.reshape_v14"(%[[G]], %{{.*}}) {{.*}} -> tensor<2x4x5xf32>
// CHECK: return %[[Y]]
func.func @matmul_3d(%arg0: tensor<2x4x3xf32>) -> tensor<2x4x5xf32> {
  %0 = "onnx.constant"() {value = dense<1.000000e+00> : tensor<3x5xf32>} : () -> tensor<3x5xf32>
  %1 = "onnx.constant"() {value = dense<[[[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]> : tensor<1x1x5xf32>} : () -> tensor<1x1x5xf32>
  %2 = "onnx.mat_mul"(%arg0, %0) : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  %3 = "onnx.add"(%1, %2) : (tensor<1x1x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %3 : tensor<2x4x5xf32>
}

// -----
// The bias grows the result (4x1 matmul + 4x5 bias), and a bias that is not constant: kept.
// CHECK-LABEL: func.func @not_a_bias
// CHECK: "onnx.mat_mul"
// CHECK: "onnx.add"
// CHECK: "onnx.mat_mul"
// CHECK: "onnx.add"
// CHECK-NOT: onnx.gemm
func.func @not_a_bias(%arg0: tensor<4x3xf32>, %c: tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = "onnx.constant"() {value = dense<1.000000e+00> : tensor<3x1xf32>} : () -> tensor<3x1xf32>
  %1 = "onnx.constant"() {value = dense<1.000000e+00> : tensor<4x5xf32>} : () -> tensor<4x5xf32>
  %2 = "onnx.mat_mul"(%arg0, %0) : (tensor<4x3xf32>, tensor<3x1xf32>) -> tensor<4x1xf32>
  %3 = "onnx.add"(%2, %1) : (tensor<4x1xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %4 = "onnx.constant"() {value = dense<1.000000e+00> : tensor<3x5xf32>} : () -> tensor<3x5xf32>
  %5 = "onnx.mat_mul"(%arg0, %4) : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %6 = "onnx.add"(%5, %c) : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  return %3, %6 : tensor<4x5xf32>, tensor<4x5xf32>
}
