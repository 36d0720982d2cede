"""Helpers of the ai.onnx.ml tests (test/python/ml): compile a model per opt
level and compare it with onnxruntime at several batch sizes. (Not named
conftest.py: test/python/conftest.py would shadow it in ``from conftest``.)"""
from __future__ import annotations

import numpy as np
import onnx


def compile_model(model: onnx.ModelProto, path, opt_level: int = 0):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    so = onnx_mlir_py.compile(model, output=str(path), opt_level=opt_level)
    return ExecutionSession(so)


def ort_run(model: onnx.ModelProto, feeds: dict) -> list:
    import onnxruntime as ort
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def assert_like_ort(got: list, want: list, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert g.shape == w.shape, f"output {i}: shape {g.shape}, onnxruntime {w.shape}"
        if w.dtype.kind == "f":
            assert g.dtype == w.dtype, f"output {i}: {g.dtype}, onnxruntime {w.dtype}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


def check_vs_ort(model: onnx.ModelProto, tmp_path, batches, features: int, opt_levels=(0, 3),
                 dtype=np.float32, seed: int = 0, rtol: float = 1e-5, atol: float = 1e-6):
    """Compile at each opt level; run at each batch size (the batch dim is
    dynamic in skl2onnx exports) and compare every output with onnxruntime."""
    rng = np.random.default_rng(seed)
    name = model.graph.input[0].name
    for o in opt_levels:
        sess = compile_model(model, tmp_path / f"m{o}.so", o)
        for n in batches:
            x = (rng.standard_normal((n, features)) * 2).astype(dtype)
            assert_like_ort(sess.run([x]), ort_run(model, {name: x}), rtol, atol)
