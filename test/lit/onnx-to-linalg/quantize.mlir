// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-DAG: = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @per_axis
// CHECK: arith.divf
// CHECK: math.roundeven
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.fptoui
// CHECK: arith.uitofp
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK-NOT: onnx.
func.func @per_axis(%arg0: tensor<2x3xf32> {onnx.name = "x"}, %arg1: tensor<3xf32> {onnx.name = "s"}, %arg2: tensor<3xui8> {onnx.name = "z"}) -> (tensor<2x3xf32> {onnx.name = "d"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.quantize_linear_v19"(%arg0, %arg1, %arg2) {axis = 1 : si64, saturate = 1 : si64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
    %1 = "onnx.dequantize_linear_v19"(%0, %arg1, %arg2) {axis = 1 : si64} : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }

