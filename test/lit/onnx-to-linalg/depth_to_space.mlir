// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-DAG: = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5, d2, d4)>

// CHECK-LABEL: func.func @d2s_onehot_eye
// CHECK: tensor.expand_shape
// CHECK: tensor.collapse_shape
// CHECK: linalg.index 1
// CHECK: arith.cmpi eq
// CHECK: linalg.index 0
// CHECK-NOT: onnx.
func.func @d2s_onehot_eye(%arg0: tensor<1x8x2x2xf32> {onnx.name = "x"}, %arg1: tensor<3xi64> {onnx.name = "i"}, %arg2: tensor<i64> {onnx.name = "d"}, %arg3: tensor<2xf32> {onnx.name = "v"}, %arg4: tensor<3x3xf32> {onnx.name = "e"}) -> (tensor<1x2x4x4xf32> {onnx.name = "y"}, tensor<3x?xf32> {onnx.name = "o"}, tensor<3x3xf32> {onnx.name = "z"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.depth_to_space_v13"(%arg0) {blocksize = 2 : si64, mode = "CRD"} : (tensor<1x8x2x2xf32>) -> tensor<1x2x4x4xf32>
    %1 = "onnx.one_hot_v11"(%arg1, %arg2, %arg3) {axis = -1 : si64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
    %2 = "onnx.eye_like_v9"(%arg4) {k = 1 : si64} : (tensor<3x3xf32>) -> tensor<3x3xf32>
    return %0, %1, %2 : tensor<1x2x4x4xf32>, tensor<3x?xf32>, tensor<3x3xf32>
  }

