// RUN: %opt %s --lower-to-linalg | FileCheck %s


// CHECK-LABEL: func.func @trig_round
// CHECK: math.sin
// CHECK: math.roundeven
// CHECK: arith.cmpf uno
// CHECK: math.absf
// CHECK: math.exp
// CHECK: arith.cmpf oeq
// CHECK: math.log
// CHECK: math.tanh
// CHECK-NOT: onnx.
func.func @trig_round(%arg0: tensor<2x3xf32> {onnx.name = "x"}) -> (tensor<2x3xf32> {onnx.name = "b"}, tensor<2x3xi1> {onnx.name = "c"}, tensor<2x3xf32> {onnx.name = "d"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.sin"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "onnx.round"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = "onnx.is_nan"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xi1>
    %3 = "onnx.mish"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>
  }

// CHECK-LABEL: func.func @mod_shift
// CHECK: arith.remsi
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: arith.shrui
// CHECK-NOT: onnx.
func.func @mod_shift(%arg0: tensor<4xi32> {onnx.name = "i"}, %arg1: tensor<4xi32> {onnx.name = "j"}, %arg2: tensor<3xui8> {onnx.name = "u"}, %arg3: tensor<3xui8> {onnx.name = "v"}) -> (tensor<4xi32> {onnx.name = "m"}, tensor<3xui8> {onnx.name = "s"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.mod_v13"(%arg0, %arg1) {fmod = 0 : si64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %1 = "onnx.bit_shift_v11"(%arg2, %arg3) {direction = "RIGHT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
    return %0, %1 : tensor<4xi32>, tensor<3xui8>
  }

// CHECK-LABEL: func.func @trilu
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.subi
// CHECK: arith.cmpi sle
// CHECK: arith.select
func.func @trilu(%arg0: tensor<3x4xf32> {onnx.name = "x"}, %arg1: tensor<i64> {onnx.name = "k"}) -> (tensor<3x4xf32> {onnx.name = "y"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.trilu"(%arg0, %arg1) {upper = 0 : si64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
    return %0 : tensor<3x4xf32>
  }

