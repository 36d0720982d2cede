// RUN: %opt %s --profile-nodes --lower-to-linalg --profile-resolve | FileCheck %s

// An ONNX op that already stands for several nodes (a graph rewrite gave it
// their fused location: MatMul + Add as one Gemm) is one event named after
// the first location, the others listed in location order (not sorted by name).
// CHECK: onnx_mlir_py.profile_events = ["{\22name\22: \22mm\22, \22op_type\22: \22Gemm\22, \22node_index\22: 0, \22nodes\22: [\22mm\22, \22bias\22], \22op_types\22: [\22Gemm\22, \22Gemm\22]}"]
// CHECK: onnx_mlir_py.profile_nodes = {{\[}}["Gemm", "mm", "bias"]]
// CHECK: call @om_prof_begin
// CHECK: linalg.matmul
// CHECK: call @om_prof_end
func.func @main_graph(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = "onnx.gemm"(%a, %b, %c) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 0 : si64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc(fused["mm", "bias"])
  return %0 : tensor<2x4xf32>
}
