"""OneHotEncoder and LabelEncoder (numeric), hand-built and in a skl2onnx
pipeline with a ColumnTransformer, compared with onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import assert_like_ort, compile_model, ort_run


def _model(op, in_t, out_t, in_shape, out_shape, opset=1, **attrs):
    node = helper.make_node(op, ["X"], ["Y"], domain="ai.onnx.ml", name="enc", **attrs)
    g = helper.make_graph([node], "m", [helper.make_tensor_value_info("X", in_t, in_shape)],
                          [helper.make_tensor_value_info("Y", out_t, out_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", opset)])


@pytest.mark.parametrize("in_t,dtype", [(TensorProto.INT64, np.int64),
                                         (TensorProto.DOUBLE, np.float64),
                                         (TensorProto.FLOAT, np.float32)])
def test_one_hot_encoder(tmp_path, in_t, dtype):
    model = _model("OneHotEncoder", in_t, TensorProto.FLOAT, ["N", 2], ["N", 2, 4],
                   cats_int64s=[3, 0, 7, -2], zeros=1)
    sess = compile_model(model, tmp_path / "m.so")
    for x in (np.array([[3, 1], [7, -2], [0, 0]]), np.array([[5, 3]])):
        x = x.astype(dtype)
        if dtype != np.int64:
            x = x + dtype(0.25)             # truncated toward zero, as onnxruntime
        assert_like_ort(sess.run([x]), ort_run(model, {"X": x}))


def test_one_hot_encoder_zeros_0_fails_on_unknown_value(tmp_path):
    from onnx_mlir_py.runtime import RuntimeInputError
    model = _model("OneHotEncoder", TensorProto.INT64, TensorProto.FLOAT, ["N"], ["N", 2],
                   cats_int64s=[1, 2], zeros=0)
    sess = compile_model(model, tmp_path / "m.so")
    x = np.array([1, 2, 2], np.int64)
    assert_like_ort(sess.run([x]), ort_run(model, {"X": x}))
    with pytest.raises(RuntimeInputError, match="'enc' .*no category"):
        sess.run([np.array([1, 5], np.int64)])


@pytest.mark.parametrize("kind", ["int_to_float", "float_to_int", "int_to_int"])
def test_label_encoder_v2(tmp_path, kind):
    keys_i, keys_f = [5, -3, 100, 7, 0], [0.5, -1.0, 2.25, 1e9, 3.0]
    if kind == "int_to_float":
        model = _model("LabelEncoder", TensorProto.INT64, TensorProto.FLOAT, ["N"], ["N"], 2,
                       keys_int64s=keys_i, values_floats=[1.5, 2.5, 3.5, 4.5, 5.5],
                       default_float=-7.0)
        x = np.array([5, -3, 100, 7, 0, 1, 99, -4, 101], np.int64)
    elif kind == "float_to_int":
        model = _model("LabelEncoder", TensorProto.FLOAT, TensorProto.INT64, ["N"], ["N"], 2,
                       keys_floats=keys_f, values_int64s=[1, 2, 3, 4, 5], default_int64=-9)
        x = np.array([0.5, -1.0, 2.25, 1e9, 3.0, 0.0, 2.5, -2.0, 4.0], np.float32)
    else:
        model = _model("LabelEncoder", TensorProto.INT64, TensorProto.INT64, ["N"], ["N"], 2,
                       keys_int64s=list(range(0, 64, 3)), values_int64s=list(range(22)),
                       default_int64=-1)
        x = np.arange(-2, 70, dtype=np.int64)
    sess = compile_model(model, tmp_path / "m.so")
    assert_like_ort(sess.run([x]), ort_run(model, {"X": x}))
    assert_like_ort(sess.run([x[:1]]), ort_run(model, {"X": x[:1]}))


def test_label_encoder_v4_tensors(tmp_path):
    model = _model("LabelEncoder", TensorProto.INT64, TensorProto.INT64, ["N"], ["N"], 4,
                   keys_tensor=helper.make_tensor("k", TensorProto.INT64, [3], [10, 20, 30]),
                   values_tensor=helper.make_tensor("v", TensorProto.INT64, [3], [1, 2, 3]),
                   default_tensor=helper.make_tensor("d", TensorProto.INT64, [1], [42]))
    x = np.array([10, 30, 15, 20, 31], np.int64)
    got = compile_model(model, tmp_path / "m.so").run([x])
    assert_like_ort(got, ort_run(model, {"X": x}))


def test_string_label_encoder(tmp_path):
    """String values (string tensors: docs/design.md "Strings"; more cases in
    test/python/lowering/test_lower_strings_ml.py)."""
    model = _model("LabelEncoder", TensorProto.INT64, TensorProto.STRING, ["N"], ["N"], 2,
                   keys_int64s=[1, 2], values_strings=["a", "b"])
    x = np.array([2, 1, 3], np.int64)
    got = compile_model(model, tmp_path / "m.so").run([x])
    assert got[0].tolist() == ["b", "a", "_Unused"]
    assert_like_ort(got, ort_run(model, {"X": x}))


def test_column_transformer_pipeline(tmp_path):
    """Pipeline(ColumnTransformer(StandardScaler on 3 float columns,
    OneHotEncoder on 2 integer columns), LogisticRegression)."""
    pytest.importorskip("sklearn")
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    rng = np.random.default_rng(0)
    num = rng.standard_normal((300, 3)).astype(np.float32)
    cat = rng.integers(0, 4, (300, 2)).astype(np.int64)
    y = (num[:, 0] + cat[:, 0] > 1.5).astype(np.int64) + (cat[:, 1] == 2)
    x = np.concatenate([num, cat.astype(np.float32)], axis=1)
    ct = ColumnTransformer([("num", StandardScaler(), [0, 1, 2]),
                            ("cat", OneHotEncoder(handle_unknown="ignore"), [3, 4])])
    p = Pipeline([("pre", ct), ("clf", LogisticRegression(max_iter=500))]).fit(x, y)
    model = skl2onnx.to_onnx(p, x[:1], options={"zipmap": False},
                             target_opset={"": 18, "ai.onnx.ml": 3})
    ops = {n.op_type for n in model.graph.node}
    assert {"OneHotEncoder", "Scaler", "LinearClassifier"} <= ops, ops
    rng2 = np.random.default_rng(1)
    for o in (0, 3):
        sess = compile_model(model, tmp_path / f"m{o}.so", o)
        for n in (1, 9):       # category 4 was never seen in training (ignored)
            xx = np.concatenate([rng2.standard_normal((n, 3)),
                                 rng2.integers(0, 5, (n, 2))], axis=1).astype(np.float32)
            assert_like_ort(sess.run([xx]), ort_run(model, {model.graph.input[0].name: xx}))
