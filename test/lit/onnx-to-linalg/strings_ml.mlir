// RUN: %opt %s --lower-to-linalg | FileCheck %s

// String tensors lower to i64 char* elements; the string ops call the C runtime.
// CHECK: llvm.mlir.global private constant @om_str_lit_0("^(a[^\0A]c)$\00")
// CHECK-LABEL: func.func @strings
// CHECK-SAME: tensor<?x3xi64> {onnx.dtype = "string"
// CHECK: linalg.generic
// CHECK: func.call @om_str_concat
// CHECK: func.call @om_str_eq
// CHECK: llvm.mlir.addressof @om_str_lit_0
// CHECK: func.call @om_regex_full_match
// CHECK: linalg.transpose
// CHECK-NOT: onnx.
func.func @strings(%arg0: tensor<?x3x!onnx.string> {onnx.name = "x"}, %arg1: tensor<3x!onnx.string> {onnx.name = "y"}) -> (tensor<?x3x!onnx.string> {onnx.name = "c"}, tensor<?x3xi1> {onnx.name = "e"}, tensor<?x3xi1> {onnx.name = "r"}, tensor<3x?x!onnx.string> {onnx.name = "t"}) attributes {onnx.graph_name = "g"} {
    %0 = "onnx.string_concat"(%arg0, %arg1) : (tensor<?x3x!onnx.string>, tensor<3x!onnx.string>) -> tensor<?x3x!onnx.string>
    %1 = "onnx.equal"(%arg0, %arg1) : (tensor<?x3x!onnx.string>, tensor<3x!onnx.string>) -> tensor<?x3xi1>
    %2 = "onnx.regex_full_match"(%arg0) {pattern = "a.c"} : (tensor<?x3x!onnx.string>) -> tensor<?x3xi1>
    %3 = "onnx.transpose"(%arg0) {perm = [1, 0]} : (tensor<?x3x!onnx.string>) -> tensor<3x?x!onnx.string>
    return %0, %1, %2, %3 : tensor<?x3x!onnx.string>, tensor<?x3xi1>, tensor<?x3xi1>, tensor<3x?x!onnx.string>
  }
