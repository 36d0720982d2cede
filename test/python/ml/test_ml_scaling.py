"""Scaler, Normalizer, Binarizer, Imputer (hand-built and from skl2onnx),
compared with onnxruntime at two batch sizes."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import assert_like_ort, compile_model, ort_run

T = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.int64: TensorProto.INT64,
     np.int32: TensorProto.INT32}


def _model(op, dtype, out_dtype, cols=3, **attrs):
    node = helper.make_node(op, ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    g = helper.make_graph([node], "m", [helper.make_tensor_value_info("X", T[dtype],
                                                                      ["N", cols])],
                          [helper.make_tensor_value_info("Y", T[out_dtype], ["N", cols])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", 1)])


def _check(model, tmp_path, xs):
    sess = compile_model(model, tmp_path / "m.so")
    for x in xs:
        assert_like_ort(sess.run([x]), ort_run(model, {"X": x}))


def _data(dtype, rows, seed=0):
    x = np.random.default_rng(seed).standard_normal((rows, 3)) * 3
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("offset,scale", [([1.0], [2.0]), ([0.5, -1.0, 2.0], [1.0, 0.1, 3.0])])
def test_scaler(tmp_path, dtype, offset, scale):
    model = _model("Scaler", dtype, np.float32, offset=offset, scale=scale)
    _check(model, tmp_path, [_data(dtype, 1), _data(dtype, 9, 1)])


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
def test_normalizer(tmp_path, norm):
    model = _model("Normalizer", np.float32, np.float32, norm=norm)
    x = _data(np.float32, 6)
    x[2] = 0.0                           # an all-zero row
    _check(model, tmp_path, [x, _data(np.float32, 1, 3)])


def test_binarizer(tmp_path):
    model = _model("Binarizer", np.float32, np.float32, threshold=0.5)
    x = _data(np.float32, 8)
    x[0] = [0.5, 0.49999, 0.50001]
    _check(model, tmp_path, [x, _data(np.float32, 2, 1)])


def test_binarizer_double_and_nan(tmp_path):
    """onnxruntime has no double Binarizer and refuses NaN; onnx.reference
    gives 0 for NaN (NaN > t is false)."""
    from onnx.reference import ReferenceEvaluator
    model = _model("Binarizer", np.float64, np.float64, threshold=0.5)
    x = _data(np.float64, 5)
    x[1] = [np.nan, 0.5, 0.5000001]
    got = compile_model(model, tmp_path / "m.so").run([x])[0]
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"X": x})[0])


@pytest.mark.parametrize("replaced", [np.nan, -1.0])
def test_imputer_floats(tmp_path, replaced):
    model = _model("Imputer", np.float32, np.float32, imputed_value_floats=[1.0, 2.0, 3.0],
                   replaced_value_float=replaced)
    x = _data(np.float32, 5)
    x[1, 0], x[2, 2], x[3, 1] = np.nan, -1.0, np.nan
    _check(model, tmp_path, [x, _data(np.float32, 1)])


def test_imputer_int64(tmp_path):
    model = _model("Imputer", np.int64, np.int64, imputed_value_int64s=[7],
                   replaced_value_int64=0)
    _check(model, tmp_path, [_data(np.int64, 6)])


def test_standard_scaler_pipeline(tmp_path):
    """Pipeline(SimpleImputer, StandardScaler, Normalizer, LogisticRegression)."""
    pytest.importorskip("sklearn")
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.datasets import make_classification
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler
    from ml_helpers import check_vs_ort
    x, y = make_classification(200, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    x = x.astype(np.float32)
    x[::7, 1] = np.nan
    p = make_pipeline(SimpleImputer(), StandardScaler(), Normalizer(),
                      LogisticRegression(max_iter=500)).fit(x, y)
    model = skl2onnx.to_onnx(p, x[:1], options={"zipmap": False},
                             target_opset={"": 18, "ai.onnx.ml": 3})
    ops = {n.op_type for n in model.graph.node}
    assert {"Imputer", "Scaler", "Normalizer", "LinearClassifier"} <= ops, ops
    check_vs_ort(model, tmp_path, (1, 8), 4)
