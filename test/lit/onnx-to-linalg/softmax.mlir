// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK: linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = "onnx.softmax"(%x) {axis = 1 : si64} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// -----

// CHECK-LABEL: func.func @logsoftmax_hardmax
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.log
// CHECK: arith.subf
// CHECK: linalg.index 0
// CHECK: arith.minsi
// CHECK: arith.cmpi eq
// CHECK-NOT: onnx.
func.func @logsoftmax_hardmax(%arg0: tensor<3x4xf32> {onnx.name = "x"}) -> (tensor<3x4xf32> {onnx.name = "y"}, tensor<3x4xf32> {onnx.name = "h"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.log_softmax"(%arg0) {axis = -1 : si64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %1 = "onnx.hardmax"(%arg0) {axis = 0 : si64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    return %0, %1 : tensor<3x4xf32>, tensor<3x4xf32>
  }
