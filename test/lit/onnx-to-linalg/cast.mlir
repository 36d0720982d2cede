// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Cast between strings and numbers: one C runtime call per element
// (om_string.c): f16 widened to f64 and passed as its bits to om_str_from_f64,
// text parsed by om_str_to_int (mode 0 = stoll) with the node's check id, then
// truncated to i32.
// CHECK: onnx_mlir_py.checks = [{{.*}}, {{.*}}, "node 'to_i32' (Cast): a string is not a number of type i32
// CHECK-LABEL: func.func @cast_strings
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f16 to f64
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: func.call @om_str_from_f64
// CHECK: linalg.generic
// CHECK: %[[ID:.*]] = arith.constant 2 : i64
// CHECK: %[[MODE:.*]] = arith.constant 0 : i64
// CHECK: func.call @om_str_to_int(%{{.*}}, %[[MODE]], %[[ID]])
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK-NOT: onnx.cast
func.func @cast_strings(%arg0: tensor<?xf16> {onnx.name = "x"}, %arg1: tensor<2x?x!onnx.string> {onnx.name = "s"}) -> (tensor<?x!onnx.string> {onnx.name = "y"}, tensor<2x?xi32> {onnx.name = "z"}) attributes {onnx.graph_name = "g"} {
  %0 = "onnx.cast_v21"(%arg0) {saturate = 1 : si64, to = 8 : si64} : (tensor<?xf16>) -> tensor<?x!onnx.string> loc("to_str")
  %1 = "onnx.cast_v21"(%arg1) {saturate = 1 : si64, to = 6 : si64} : (tensor<2x?x!onnx.string>) -> tensor<2x?xi32> loc("to_i32")
  return %0, %1 : tensor<?x!onnx.string>, tensor<2x?xi32>
}
