// RUN: %opt %s --split-input-file --pretranspose-gemm-weights | FileCheck %s --check-prefix=GEMM
// RUN: %opt %s --split-input-file --fold-constant-transposes | FileCheck %s --check-prefix=TR

// transB=1 on a constant B: B^T becomes the constant and transB 0.
// GEMM-LABEL: func.func @gemm_trans_b
// GEMM: %[[W:.*]] = "onnx.constant"() {value = dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>}
// GEMM: "onnx.gemm"(%arg0, %[[W]], %{{.*}}) {alpha = 5.000000e-01 : f32, beta = 1.000000e+00 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
func.func @gemm_trans_b(%arg0: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = "onnx.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %2 = "onnx.gemm"(%arg0, %0, %1) {alpha = 0.5 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 1 : si64} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}

// -----
// B is not a constant: nothing to do at compile time.
// GEMM-LABEL: func.func @gemm_b_not_constant
// GEMM: transB = 1 : si64
func.func @gemm_b_not_constant(%arg0: tensor<4x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %2 = "onnx.gemm"(%arg0, %b) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 1 : si64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}

// -----
// Transpose of a constant becomes the transposed constant.
// TR-LABEL: func.func @transpose_constant
// TR: %[[W:.*]] = "onnx.constant"() {value = dense<{{\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>}
// TR-NOT: onnx.transpose
// TR: "onnx.mat_mul"(%arg0, %[[W]])
func.func @transpose_constant(%arg0: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %0 = "onnx.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %1 = "onnx.transpose_v13"(%0) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "onnx.mat_mul"(%arg0, %1) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}
