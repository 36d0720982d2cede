"""ArrayFeatureExtractor vs onnxruntime: indices of rank 0/1/2, a 1-D X,
and an index out of range (a run-time error naming the node)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import assert_like_ort, compile_model, ort_run


def _model(x_shape, y_shape, out_shape, t=TensorProto.FLOAT):
    node = helper.make_node("ArrayFeatureExtractor", ["X", "Y"], ["Z"], domain="ai.onnx.ml",
                            name="afe")
    g = helper.make_graph([node], "m", [helper.make_tensor_value_info("X", t, x_shape),
                                        helper.make_tensor_value_info("Y", TensorProto.INT64,
                                                                      y_shape)],
                          [helper.make_tensor_value_info("Z", t, out_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", 1)])


@pytest.mark.parametrize("ind", [np.array([2, 0, 2]), np.array([[1, 3]]),
                                 np.array([[0, 1], [3, 2]])])
def test_array_feature_extractor(tmp_path, ind):
    model = _model(["N", "C"], ["K"] if ind.ndim == 1 else ["A", "B"], None)
    sess = compile_model(model, tmp_path / "m.so")
    rng = np.random.default_rng(0)
    for n in (1, 5):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        feeds = {"X": x, "Y": ind.astype(np.int64)}
        assert_like_ort(sess.run([x, feeds["Y"]]), ort_run(model, feeds))


def test_array_feature_extractor_1d_and_int64(tmp_path):
    model = _model([6], [2], None, TensorProto.INT64)
    x, y = np.arange(6, dtype=np.int64) * 10, np.array([5, 1], np.int64)
    got = compile_model(model, tmp_path / "m.so").run([x, y])
    assert_like_ort(got, ort_run(model, {"X": x, "Y": y}))


def test_index_out_of_range_fails_naming_the_node(tmp_path):
    from onnx_mlir_py.runtime import RuntimeInputError
    sess = compile_model(_model(["N", 4], ["K"], None), tmp_path / "m.so")
    with pytest.raises(RuntimeInputError, match="'afe'.*index 4 is out of range"):
        sess.run([np.zeros((2, 4), np.float32), np.array([0, 4], np.int64)])
