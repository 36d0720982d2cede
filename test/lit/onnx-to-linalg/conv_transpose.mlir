// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-DAG: = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, -d3 + 2)>

// CHECK-LABEL: func.func @conv_t_1d
// CHECK: tensor.insert_slice
// CHECK: [1, 1, 2]
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: onnx.
func.func @conv_t_1d(%arg0: tensor<1x2x5xf32> {onnx.name = "x"}, %arg1: tensor<2x3x3xf32> {onnx.name = "w"}) -> (tensor<1x3x10xf32> {onnx.name = "y"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.conv_transpose"(%arg0, %arg1) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<1x2x5xf32>, tensor<2x3x3xf32>) -> tensor<1x3x10xf32>
    return %0 : tensor<1x3x10xf32>
  }

