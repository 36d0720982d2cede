// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @grid_sample
// CHECK: "onnx.grid_sample"{{.*}} -> tensor<2x3x5x6xf32>
// CHECK: "onnx.grid_sample"{{.*}} -> tensor<2x?x4x5x6xf32>
func.func @grid_sample(%x: tensor<2x3x7x8xf32>, %g: tensor<?x5x6x2xf32>, %x3: tensor<?x?x2x2x2xf32>, %g3: tensor<2x4x5x6x3xf32>) -> (!onnx.unknown, !onnx.unknown) {
  %0 = "onnx.grid_sample"(%x, %g) {align_corners = 0 : si64, mode = "linear", padding_mode = "zeros"} : (tensor<2x3x7x8xf32>, tensor<?x5x6x2xf32>) -> !onnx.unknown
  %1 = "onnx.grid_sample"(%x3, %g3) {align_corners = 1 : si64, mode = "nearest", padding_mode = "border"} : (tensor<?x?x2x2x2xf32>, tensor<2x4x5x6x3xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// A run-time size: the rank and the last dim from size's length.
// CHECK-LABEL: func.func @affine_grid
// CHECK: "onnx.affine_grid"{{.*}} -> tensor<?x?x?x2xf32>
func.func @affine_grid(%t: tensor<?x2x3xf32>, %s: tensor<4xi64>) -> !onnx.unknown {
  %0 = "onnx.affine_grid"(%t, %s) {align_corners = 0 : si64} : (tensor<?x2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
