// RUN: %opt %s --shape-inference | FileCheck %s

// CHECK-LABEL: func.func @regressor
// CHECK: "onnx_ml.tree_ensemble_regressor_v3"{{.*}} -> tensor<?x2xf32>
func.func @regressor(%x: tensor<?x3xf32>) -> !onnx.unknown {
  %0 = "onnx_ml.tree_ensemble_regressor_v3"(%x) {aggregate_function = "SUM", n_targets = 2 : si64, nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 2, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, post_transform = "NONE", target_ids = array<i64: 0, 1>, target_nodeids = array<i64: 1, 2>, target_treeids = array<i64: 0, 0>, target_weights = array<f32: 1.0, 2.0>} : (tensor<?x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// CHECK-LABEL: func.func @classifier
// CHECK: "onnx_ml.tree_ensemble_classifier_v3"{{.*}} -> (tensor<5xi64>, tensor<5x3xf32>)
func.func @classifier(%x: tensor<5x3xf32>) -> !onnx.unknown {
  %0:2 = "onnx_ml.tree_ensemble_classifier_v3"(%x) {class_ids = array<i64: 0, 2>, class_nodeids = array<i64: 1, 2>, class_treeids = array<i64: 0, 0>, class_weights = array<f32: 1.0, 2.0>, classlabels_int64s = array<i64: 4, 5, 6>, nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_falsenodeids = array<i64: 2, 0, 0>, nodes_featureids = array<i64: 0, 0, 0>, nodes_nodeids = array<i64: 0, 1, 2>, nodes_treeids = array<i64: 0, 0, 0>, nodes_truenodeids = array<i64: 1, 0, 0>, nodes_values = array<f32: 5.000000e-01, 0.0, 0.0>, post_transform = "NONE"} : (tensor<5x3xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#1 : !onnx.unknown
}
