// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'g0' (Gather): axis 3 is out of range for rank 3 (expected [-3, 2])
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2xi64>) -> !onnx.unknown {
  %0 = "onnx.gather"(%x, %i) {axis = 3 : si64} : (tensor<3x4x5xf32>, tensor<2xi64>) -> !onnx.unknown loc("g0")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'g1' (Gather): index 4 is out of range for dim 1 of data [3x4x5] (expected [-4, 3])
func.func @f(%x: tensor<3x4x5xf32>) -> !onnx.unknown {
  %i = "onnx.constant"() {value = dense<[0, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "onnx.gather"(%x, %i) {axis = 1 : si64} : (tensor<3x4x5xf32>, tensor<2xi64>) -> !onnx.unknown loc("g1")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'ge' (GatherElements): data [3x4x5] and indices [2x2] must have the same rank
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2x2xi64>) -> !onnx.unknown {
  %0 = "onnx.gather_elements"(%x, %i) {axis = 0 : si64} : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> !onnx.unknown loc("ge")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'gnd' (GatherND): indices [2x4] index 4 dims, but data [3x4x5] has only 3 after batch_dims 0
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2x4xi64>) -> !onnx.unknown {
  %0 = "onnx.gather_nd"(%x, %i) {batch_dims = 0 : si64} : (tensor<3x4x5xf32>, tensor<2x4xi64>) -> !onnx.unknown loc("gnd")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'se' (ScatterElements): updates [2x3] must have the shape of indices [2x2]
func.func @f(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>, %u: tensor<2x3xf32>) -> !onnx.unknown {
  %0 = "onnx.scatter_elements"(%x, %i, %u) {axis = 0 : si64, reduction = "none"} : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<2x3xf32>) -> !onnx.unknown loc("se")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'snd' (ScatterND): updates dim 1 is 4: expected 5 (indices[:-1] + data[2:])
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2x2xi64>, %u: tensor<2x4xf32>) -> !onnx.unknown {
  %0 = "onnx.scatter_nd"(%x, %i, %u) {reduction = "none"} : (tensor<3x4x5xf32>, tensor<2x2xi64>, tensor<2x4xf32>) -> !onnx.unknown loc("snd")
  return %0 : !onnx.unknown
}
