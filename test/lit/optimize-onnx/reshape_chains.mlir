// RUN: %opt %s --split-input-file --merge-transposes | FileCheck %s --check-prefix=TR
// RUN: %opt %s --split-input-file --merge-reshapes | FileCheck %s --check-prefix=RS
// RUN: %opt %s --split-input-file --remove-identity-like | FileCheck %s --check-prefix=ID

// Transpose pairs: perm [1, 2, 0] then [2, 0, 1] is the identity (removed);
// [0, 2, 1] then [1, 0, 2] compose to [0, 2, 1][1, 0, 2] = [2, 0, 1].
// TR-LABEL: func.func @transposes
// TR: %[[T:.*]] = "onnx.transpose_v13"(%arg0) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// TR-NOT: onnx.transpose
// TR: return %arg0, %[[T]]
func.func @transposes(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %0 = "onnx.transpose_v13"(%arg0) {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "onnx.transpose_v13"(%0) {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
  %2 = "onnx.transpose_v13"(%arg0) {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %3 = "onnx.transpose_v13"(%2) {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----
// Reshape(Flatten(x)) -> one Reshape of x to the final static shape.
// RS-LABEL: func.func @reshapes
// RS: "onnx.constant"() {value = dense<[3, 8]> : tensor<2xi64>}
// RS: %[[R:.*]] = "onnx.reshape_v14"(%arg0, %{{.*}}) {allowzero = 0 : si64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<3x8xf32>
// RS-NOT: onnx.flatten
// RS: return %[[R]]
func.func @reshapes(%arg0: tensor<2x3x4xf32>) -> tensor<3x8xf32> {
  %s = "onnx.constant"() {value = dense<[3, 0]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.flatten_v13"(%arg0) {axis = 1 : si64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %1 = "onnx.reshape_v14"(%0, %s) {allowzero = 0 : si64} : (tensor<2x12xf32>, tensor<2xi64>) -> tensor<3x8xf32>
  return %1 : tensor<3x8xf32>
}

// -----
// Identity-like ops: Reshape to the same shape, Cast to the same type, Expand to
// the same shape are removed; a Cast that changes the type stays.
// ID-LABEL: func.func @identity_like
// ID-NOT: onnx.reshape
// ID-NOT: onnx.expand
// ID: %[[C:.*]] = "onnx.cast_v13"(%arg0) {{.*}} -> tensor<2x3xf16>
// ID: return %arg0, %[[C]]
func.func @identity_like(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf16>) {
  %s = "onnx.constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.reshape_v14"(%arg0, %s) {allowzero = 0 : si64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %1 = "onnx.cast_v13"(%0) {to = 1 : si64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "onnx.expand"(%1, %s) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %3 = "onnx.cast_v13"(%2) {to = 10 : si64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  return %2, %3 : tensor<2x3xf32>, tensor<2x3xf16>
}
