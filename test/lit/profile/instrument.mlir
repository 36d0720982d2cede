// RUN: %opt %s --profile-nodes | FileCheck %s --check-prefix=NODES
// RUN: %opt %s --profile-nodes --lower-to-linalg --o3-fuse-elementwise --profile-resolve | FileCheck %s --check-prefix=EVENTS

// profile-nodes: every top-level ONNX op but Constant between om_prof_begin(id)
// and om_prof_end(id), ids into the node table (op type, node name).
// NODES: onnx_mlir_py.profile_nodes = {{\[}}["Add", "add"], ["Relu", "relu"], ["Reshape", "flat"]]
// NODES-DAG: func.func private @om_prof_begin(i64)
// NODES-DAG: func.func private @om_prof_end(i64)
// NODES-LABEL: func.func @main_graph
// NODES: "onnx.constant"
// NODES: %[[B0:.*]] = arith.constant 0 : i64
// NODES-NEXT: call @om_prof_begin(%[[B0]])
// NODES-NEXT: "onnx.add"
// NODES-NEXT: %[[E0:.*]] = arith.constant 0 : i64
// NODES-NEXT: call @om_prof_end(%[[E0]])
// NODES: call @om_prof_begin
// NODES-NEXT: "onnx.relu"
// NODES: call @om_prof_end
// NODES: call @om_prof_begin
// NODES-NEXT: "onnx.reshape"
// NODES: call @om_prof_end
// NODES-NEXT: return

// profile-resolve after elementwise fusion: the fused Add+Relu generic sits
// in the Relu's bracket (the Add's is empty and removed); it is one event
// named after the Add, the first node in graph order, listing both nodes.
// EVENTS: onnx_mlir_py.profile_events = [
// EVENTS-SAME: \22name\22: \22add\22, \22op_type\22: \22Add\22, \22node_index\22: 0, \22nodes\22: [\22add\22, \22relu\22]
// EVENTS-SAME: \22name\22: \22flat\22
// EVENTS-LABEL: func.func @main_graph
// EVENTS: call @om_prof_begin(%{{.*}}) : (i64) -> ()
// EVENTS-NEXT: tensor.empty
// EVENTS-NEXT: linalg.generic
// EVENTS: arith.addf
// EVENTS-NEXT: arith.maximumf
// EVENTS: arith.constant 0 : i64
// EVENTS-NEXT: call @om_prof_end
// EVENTS-NEXT: arith.constant 1 : i64
// EVENTS-NEXT: call @om_prof_begin
// EVENTS-NEXT: tensor.collapse_shape
// EVENTS-NEXT: arith.constant 1 : i64
// EVENTS-NEXT: call @om_prof_end
// EVENTS-NOT: om_prof_begin
// EVENTS: return
func.func @main_graph(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %c = "onnx.constant"() {value = dense<[6]> : tensor<1xi64>} : () -> tensor<1xi64> loc("shape")
  %a = "onnx.add"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add")
  %r = "onnx.relu"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  %f = "onnx.reshape"(%r, %c) {allowzero = 0 : si64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32> loc("flat")
  return %f : tensor<6xf32>
}
