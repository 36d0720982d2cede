"""Ops whose output size depends on input values (NonZero, Compress),
compiled once with every dim dynamic and compared with onnxruntime at
several shapes and values (the count is computed at run time)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession


@pytest.mark.parametrize("opt_level", [0, 3])
def test_nonzero_and_compress_with_run_time_values(tmp_path, opt_level):
    m = h.make_model(h.make_graph(
        [h.make_node("NonZero", ["x"], ["nz"]),
         h.make_node("Compress", ["y", "c"], ["cy"], axis=0)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["a", "b"]),
         h.make_tensor_value_info("y", T.FLOAT, ["n", 3]),
         h.make_tensor_value_info("c", T.BOOL, ["k"])],
        [h.make_tensor_value_info("nz", T.INT64, None),
         h.make_tensor_value_info("cy", T.FLOAT, None)]),
        opset_imports=[h.make_opsetid("", 17)])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ort.InferenceSession(m.SerializeToString())
    rng = np.random.default_rng(0)
    # the condition may be shorter than the axis (k < n): the rest is dropped
    for a, b, n, k in ((2, 3, 4, 4), (5, 1, 3, 2), (1, 7, 6, 6), (3, 3, 2, 0)):
        feeds = {"x": (rng.random((a, b)) > 0.5).astype(np.float32),
                 "y": rng.random((n, 3)).astype(np.float32), "c": rng.random(k) > 0.4}
        got = sess.run(list(feeds.values()))
        want = ref.run(None, feeds)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
