// RUN: not %opt %s --verify-onnx --split-input-file | FileCheck %s

// CHECK: error: node 'dangling' (TreeEnsembleRegressor): node 0 of tree 0 has a child that is not a node of its tree
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", post_transform = "NONE", n_targets = 1 : si64, nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 7, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, target_ids = array<i64: 0>, target_nodeids = array<i64: 1>, target_treeids = array<i64: 0>, target_weights = array<f32: 1.0>} : (tensor<?x3xf32>) -> !onnx.unknown loc("dangling")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'tid' (TreeEnsembleRegressor): target/class id 3 out of range [0, 0]
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", n_targets = 1 : si64, nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 2, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, post_transform = "NONE", target_ids = array<i64: 3>, target_nodeids = array<i64: 1>, target_treeids = array<i64: 0>, target_weights = array<f32: 1.0>} : (tensor<?x3xf32>) -> !onnx.unknown loc("tid")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'cyc' (TreeEnsembleRegressor): tree 0 has 0 root nodes (nodes no other node points to), expected 1
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", post_transform = "NONE", n_targets = 1 : si64, nodes_modes = ["BRANCH_LEQ", "BRANCH_LEQ"], nodes_falsenodeids = array<i64: 1, 0>, nodes_featureids = array<i64: 0, 0>, nodes_nodeids = array<i64: 0, 1>, nodes_treeids = array<i64: 0, 0>, nodes_truenodeids = array<i64: 1, 0>, nodes_values = array<f32: 0.5, 0.5>, target_ids = array<i64: 0>, target_nodeids = array<i64: 1>, target_treeids = array<i64: 0>, target_weights = array<f32: 1.0>} : (tensor<?x3xf32>) -> !onnx.unknown loc("cyc")
  return %0 : !onnx.unknown
}

// -----
// CHECK: error: node 'mode' (TreeEnsembleRegressor): unknown node mode(s) ['BRANCH_FOO']
func.func @f(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", n_targets = 1 : si64, nodes_modes = ["BRANCH_FOO", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 2, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, post_transform = "NONE", target_ids = array<i64: 0>, target_nodeids = array<i64: 1>, target_treeids = array<i64: 0>, target_weights = array<f32: 1.0>} : (tensor<?x3xf32>) -> !onnx.unknown loc("mode")
  return %0 : !onnx.unknown
}
