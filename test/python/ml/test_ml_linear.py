"""LinearClassifier / LinearRegressor from skl2onnx exports and hand-built
binary models (every post_transform), compared with onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import assert_like_ort, check_vs_ort, compile_model, ort_run

pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402

OPSETS = {"": 18, "ai.onnx.ml": 3}


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_regression(tmp_path, n_classes):
    x, y = make_classification(200, 5, n_informative=3, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    m = LogisticRegression(max_iter=500).fit(x.astype(np.float32), y)
    model = skl2onnx.to_onnx(m, x[:1].astype(np.float32), options={"zipmap": False},
                             target_opset=OPSETS)
    check_vs_ort(model, tmp_path, (1, 6, 300), 5)


@pytest.mark.parametrize("targets", [1, 2])
@pytest.mark.quick
def test_linear_regression(tmp_path, targets):
    x, y = make_regression(100, 4, n_targets=targets, random_state=0)
    m = LinearRegression().fit(x.astype(np.float32), y)
    model = skl2onnx.to_onnx(m, x[:1].astype(np.float32), target_opset=OPSETS)
    check_vs_ort(model, tmp_path, (1, 5), 4, rtol=1e-5, atol=1e-4)


def _binary(post, labels=(0, 1)):
    node = helper.make_node("LinearClassifier", ["X"], ["Y", "Z"], domain="ai.onnx.ml",
                            coefficients=[0.5, -1.0, 0.25], intercepts=[0.1],
                            classlabels_ints=list(labels), post_transform=post)
    g = helper.make_graph([node], "l", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                      ["N", 3])],
                          [helper.make_tensor_value_info("Y", TensorProto.INT64, ["N"]),
                           helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N", 2])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", 1)])


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
def test_binary_one_score_column(tmp_path, post):
    model = _binary(post, (4, 9))
    x = np.random.default_rng(0).standard_normal((11, 3)).astype(np.float32)
    got = compile_model(model, tmp_path / "m.so").run([x])
    assert_like_ort(got, ort_run(model, {"X": x}))


def test_wrong_feature_count_fails_at_run_time(tmp_path):
    from onnx_mlir_py.runtime import RuntimeInputError
    model = _binary("NONE")
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "C"
    sess = compile_model(model, tmp_path / "m.so")
    with pytest.raises(RuntimeInputError, match="LinearClassifier.*4 features"):
        sess.run([np.zeros((2, 4), np.float32)])
