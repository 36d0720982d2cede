"""Tree ensembles exported by skl2onnx (trained here on generated data) and
hand-built ones (every branch mode, missing values, set membership,
aggregates, post transforms), compiled and compared with onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ml_helpers import assert_like_ort, check_vs_ort, compile_model, ort_run

sk = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,  # noqa: E402
                              RandomForestClassifier, RandomForestRegressor)

OPSETS = {"": 18, "ai.onnx.ml": 3}
BATCHES = (1, 7, 300)          # 300: more than one block of rows


def _export(model, x, zipmap=False):
    opts = {"zipmap": False} if not zipmap and hasattr(model, "predict_proba") else None
    return skl2onnx.to_onnx(model, x[:1], options=opts, target_opset=OPSETS)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_sklearn_tree_classifiers(tmp_path, n_classes, kind):
    x, y = make_classification(300, 6, n_informative=4, n_classes=n_classes, random_state=0)
    x = x.astype(np.float32)
    m = (RandomForestClassifier(8, max_depth=6, random_state=0) if kind == "forest"
         else GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0)).fit(x, y)
    check_vs_ort(_export(m, x), tmp_path, BATCHES, 6)


@pytest.mark.parametrize("kind", ["forest", "boosting"])
def test_sklearn_tree_regressors(tmp_path, kind):
    x, y = make_regression(300, 5, random_state=0)
    x = x.astype(np.float32)
    m = (RandomForestRegressor(8, max_depth=6, random_state=0) if kind == "forest"
         else GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0)).fit(x, y)
    check_vs_ort(_export(m, x), tmp_path, BATCHES, 5, rtol=1e-5, atol=1e-4)


def test_multi_target_forest_regressor(tmp_path):
    x, y = make_regression(200, 4, n_targets=3, random_state=1)
    m = RandomForestRegressor(5, max_depth=5, random_state=0).fit(x.astype(np.float32), y)
    check_vs_ort(_export(m, x.astype(np.float32)), tmp_path, (1, 9), 4, atol=1e-4)


def test_static_batch_and_labels_not_0_to_k(tmp_path):
    """Labels 3/7/11 and a model whose batch dim is fixed (3)."""
    x, y = make_classification(200, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=2)
    y = np.array([3, 7, 11])[y]
    m = RandomForestClassifier(4, max_depth=4, random_state=0).fit(x.astype(np.float32), y)
    model = _export(m, x.astype(np.float32))
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 3
    check_vs_ort(model, tmp_path, (3,), 4)


# -- hand-built ensembles -----------------------------------------------------------
def _tree_regressor(modes, values, missing=None, agg="SUM", post="NONE", base=None, targets=1):
    """Two trees over 2 features: tree 0 a 3-level chain with the given modes,
    tree 1 one split on feature 1 (mode modes[0])."""
    attrs = dict(
        nodes_treeids=[0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
        nodes_nodeids=[0, 1, 2, 3, 4, 5, 6, 0, 1, 2],
        nodes_featureids=[0, 1, 0, 0, 0, 0, 0, 1, 0, 0],
        nodes_modes=list(modes[:3]) + ["LEAF"] * 4 + [modes[0], "LEAF", "LEAF"],
        nodes_values=list(values[:3]) + [0.0] * 4 + [0.5, 0.0, 0.0],
        nodes_truenodeids=[1, 3, 5, 0, 0, 0, 0, 1, 0, 0],
        nodes_falsenodeids=[2, 4, 6, 0, 0, 0, 0, 2, 0, 0],
        # every leaf scores every target (a target no reached leaf scores is
        # base_values in onnx.reference, 0 in onnxruntime)
        target_treeids=[0, 0, 0, 0, 1, 1] * targets,
        target_nodeids=[3, 4, 5, 6, 1, 2] * targets,
        target_ids=[t for t in range(targets) for _ in range(6)],
        target_weights=[w * (t + 1) for t in range(targets)
                        for w in (1.5, -2.0, 3.25, 4.0, 10.0, -7.5)],
        n_targets=targets, aggregate_function=agg, post_transform=post)
    if missing is not None:
        attrs["nodes_missing_value_tracks_true"] = list(missing) + [0] * 4 + [missing[0], 0, 0]
    if base is not None:
        attrs["base_values"] = base
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                      ["N", 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                                         ["N", targets])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", 3)])


def _grid():
    """Values on and around the thresholds, and NaNs."""
    v = np.array([-1.0, 0.0, 0.25, 0.5, 0.75, 1.0, np.nan], np.float32)
    return np.array([[a, b] for a in v for b in v], np.float32)


@pytest.mark.parametrize("modes", [("BRANCH_LEQ",) * 3, ("BRANCH_LT",) * 3,
                                   ("BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ"),
                                   ("BRANCH_NEQ", "BRANCH_LEQ", "BRANCH_GT")])
@pytest.mark.parametrize("missing", [None, (1, 0, 1)])
def test_branch_modes_and_missing_values(tmp_path, modes, missing):
    model = _tree_regressor(modes, (0.5, 0.25, 1.0), missing)
    x = _grid()
    for o in (0, 3):
        got = compile_model(model, tmp_path / f"m{o}.so", o).run([x])
        assert_like_ort(got, ort_run(model, {"X": x}))


@pytest.mark.parametrize("agg", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("post,targets", [("NONE", 2), ("SOFTMAX", 2), ("LOGISTIC", 2),
                                          ("SOFTMAX_ZERO", 2), ("NONE", 1), ("PROBIT", 1)])
def test_aggregates_and_post_transforms(tmp_path, agg, post, targets):
    if post == "PROBIT":       # probit needs scores in (0, 1)
        model = _tree_regressor(("BRANCH_LEQ",) * 3, (0.5, 0.25, 1.0), agg=agg, post=post,
                                targets=targets)
        for a in model.graph.node[0].attribute:
            if a.name == "target_weights":
                a.floats[:] = [0.1, 0.2, 0.05, 0.3, 0.15, 0.25] * targets
    else:
        model = _tree_regressor(("BRANCH_LEQ",) * 3, (0.5, 0.25, 1.0), agg=agg, post=post,
                                base=[0.5] * targets, targets=targets)
    x = _grid()
    got = compile_model(model, tmp_path / "m.so", 0).run([x])
    assert_like_ort(got, ort_run(model, {"X": x}), rtol=1e-5, atol=1e-5)


def _tree_ensemble_v5(agg=1, member=True):
    """TreeEnsemble (ml opset 5): a BRANCH_MEMBER root on feature 0 ({1, 3, 4}),
    a second tree that is a single leaf."""
    t = lambda a, dt: helper.make_tensor("t", dt, [len(a)], a)  # noqa: E731
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml",
        nodes_featureids=[0, 1, 0], nodes_splits=t([0.0, 2.5, 0.0], TensorProto.DOUBLE),
        nodes_modes=t([6 if member else 0, 0, 0], TensorProto.UINT8),
        nodes_truenodeids=[1, 0, 3], nodes_trueleafs=[0, 1, 1],
        nodes_falsenodeids=[0, 1, 3], nodes_falseleafs=[1, 1, 1],
        nodes_missing_value_tracks_true=[1, 0, 0],
        leaf_targetids=[0, 1, 0, 1], leaf_weights=t([1.0, 2.0, 3.0, 4.5], TensorProto.DOUBLE),
        tree_roots=[0, 2], n_targets=2, aggregate_function=agg,
        membership_values=t([1.0, 3.0, 4.0, np.nan] if member else [], TensorProto.DOUBLE)
        if member else None)
    if not member:
        del node.attribute[[a.name for a in node.attribute].index("membership_values")]
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("X", TensorProto.DOUBLE,
                                                                      ["N", 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, ["N", 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                               helper.make_opsetid("ai.onnx.ml", 5)])


@pytest.mark.parametrize("agg", [0, 1, 2, 3])
def test_tree_ensemble_v5_membership(tmp_path, agg):
    model = _tree_ensemble_v5(agg)
    x = np.array([[a, b] for a in (0, 1, 2, 3, 4, 5, np.nan) for b in (2, 3, np.nan)])
    for o in (0, 3):
        got = compile_model(model, tmp_path / f"m{o}.so", o).run([x])
        assert_like_ort(got, ort_run(model, {"X": x}))


def test_malformed_tree_is_refused_naming_the_node(tmp_path):
    from onnx_mlir_py.errors import OnnxMlirError
    model = _tree_regressor(("BRANCH_LEQ",) * 3, (0.5, 0.25, 1.0))
    for a in model.graph.node[0].attribute:
        if a.name == "nodes_truenodeids":
            a.ints[0] = 42
    model.graph.node[0].name = "forest"
    with pytest.raises(OnnxMlirError, match="forest.*child"):
        compile_model(model, tmp_path / "m.so", 0)


# -- random ensembles ---------------------------------------------------------------
_MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def _random_ensemble(rng, classifier: bool):
    """Random trees (depth <= 4, every mode, random missing-value tracks and
    features; every leaf scores every target/class), random aggregate /
    post_transform / base_values."""
    nf, k = int(rng.integers(1, 5)), int(rng.integers(3, 5) if classifier else rng.integers(1, 4))
    a = {n: [] for n in ("tids", "nids", "feat", "modes", "vals", "tn", "fn", "mt")}
    w = {n: [] for n in ("t", "n", "id", "w")}
    for t in range(int(rng.integers(1, 5))):
        info, frontier, nid = {}, [(0, 0)], 1
        while frontier:
            node, d = frontier.pop()
            if d < 4 and rng.random() < 0.7:
                info[node], nid = (nid, nid + 1), nid + 2
                frontier += [(info[node][0], d + 1), (info[node][1], d + 1)]
            else:
                info[node] = None
        for node in sorted(info):
            leaf = info[node] is None
            a["tids"].append(t)
            a["nids"].append(node)
            a["feat"].append(0 if leaf else int(rng.integers(0, nf)))
            a["modes"].append("LEAF" if leaf else _MODES[rng.integers(0, 6)])
            a["vals"].append(0.0 if leaf else float(rng.choice([0.0, 0.5, -0.5, 1.0])))
            a["tn"].append(0 if leaf else info[node][0])
            a["fn"].append(0 if leaf else info[node][1])
            a["mt"].append(int(rng.integers(0, 2)))
            for c in range(k if leaf else 0):
                for key, v in zip("t n id w".split(), (t, node, c, round(rng.normal(), 3))):
                    w[key].append(v)
    attrs = dict(nodes_treeids=a["tids"], nodes_nodeids=a["nids"], nodes_featureids=a["feat"],
                 nodes_modes=a["modes"], nodes_values=a["vals"], nodes_truenodeids=a["tn"],
                 nodes_falsenodeids=a["fn"], nodes_missing_value_tracks_true=a["mt"],
                 post_transform=str(rng.choice(["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"]))
                 if k > 1 else "NONE")
    if rng.random() < 0.5:
        attrs["base_values"] = [round(rng.normal(), 2) for _ in range(k)]
    if classifier:
        node = helper.make_node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml",
                                class_treeids=w["t"], class_nodeids=w["n"], class_ids=w["id"],
                                class_weights=w["w"], classlabels_int64s=list(range(10, 10 + k)),
                                **attrs)
        outs = [helper.make_tensor_value_info("Y", TensorProto.INT64, ["N"]),
                helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N", k])]
    else:
        node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml",
                                target_treeids=w["t"], target_nodeids=w["n"], target_ids=w["id"],
                                target_weights=w["w"], n_targets=k, **attrs,
                                aggregate_function=str(rng.choice(["SUM", "AVERAGE", "MIN",
                                                                   "MAX"])))
        outs = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", k])]
    g = helper.make_graph([node], "r", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                      ["N", nf])], outs)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                                helper.make_opsetid("ai.onnx.ml", 3)])
    return model, nf


@pytest.mark.parametrize("seed", range(12))
def test_random_ensembles_match_onnxruntime(tmp_path, seed):
    """Regressors (even seeds) and classifiers with 3-4 classes (odd seeds);
    inputs on the thresholds and NaN. (With two classes onnxruntime returns
    the labels 0/1 whatever classlabels_int64s says unless one class has the
    weights; those follow onnx.reference: test_sklearn_tree_classifiers.)"""
    rng = np.random.default_rng(seed)
    model, nf = _random_ensemble(rng, classifier=bool(seed % 2))
    x = rng.choice([0.0, 0.5, -0.5, 1.0, 0.25, np.nan, 2.0], size=(40, nf)).astype(np.float32)
    got = compile_model(model, tmp_path / "m.so", seed % 4 == 3 and 3 or 0).run([x])
    assert_like_ort(got, ort_run(model, {"X": x}), rtol=1e-5, atol=1e-5)


def test_too_few_features_fail_at_run_time(tmp_path):
    """X [N, ?]: a row shorter than the features the trees read makes the call
    fail naming the node (a run-time check), never reading past the row."""
    from onnx_mlir_py.runtime import RuntimeInputError
    model = _tree_regressor(("BRANCH_LEQ",) * 3, (0.5, 0.25, 1.0))
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "F"
    model.graph.node[0].name = "forest"
    sess = compile_model(model, tmp_path / "m.so")
    x = _grid()
    assert_like_ort(sess.run([x]), ort_run(model, {"X": x}))
    with pytest.raises(RuntimeInputError, match="'forest'.*read feature 1 but X has 1 features"):
        sess.run([np.zeros((3, 1), np.float32)])


def test_double_input_compared_in_double(tmp_path):
    """A double X against float thresholds is compared in f64, as onnxruntime
    (C++ promotes the float): 0.300000015 > 0.3f = 0.30000001192..., but
    rounded to f32 first it would equal the threshold and go left."""
    model = _tree_regressor(("BRANCH_LEQ",) * 3, (0.3, 0.25, 1.0))
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    x = np.array([[0.300000015, 0.0], [0.3000000119, 0.0], [0.29999, 2.0]], np.float64)
    got = compile_model(model, tmp_path / "m.so").run([x])
    assert_like_ort(got, ort_run(model, {"X": x}))
