// RUN: %opt %s --shape-inference --lower-to-linalg | FileCheck %s

// The traversal: blocks of rows, trees, steps; each step one generic that
// selects the next node (no branch), then the leaf weights are accumulated.
// CHECK-LABEL: func.func @regressor
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.cmpf ole
// CHECK: arith.select
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @regressor(%x: tensor<?x3xf32>) -> tensor<?x1xf32> {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", n_targets = 1 : si64, nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 2, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, post_transform = "NONE", target_ids = array<i64: 0, 0>, target_nodeids = array<i64: 1, 2>, target_treeids = array<i64: 0, 0>, target_weights = array<f32: 1.0, 2.0>} : (tensor<?x3xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}
