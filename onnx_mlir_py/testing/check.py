"""Compile a model with the full pipeline and compare with a reference
(``onnx.reference.ReferenceEvaluator`` or onnxruntime)."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import onnx


def run_compiled(model: onnx.ModelProto, feeds: dict, opt_level: int = 0,
                 workdir: str | None = None) -> list[np.ndarray]:
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    with tempfile.TemporaryDirectory(dir=workdir) as d:
        so = onnx_mlir_py.compile(model, output=os.path.join(d, "m.so"), opt_level=opt_level)
        sess = ExecutionSession(so)
        return sess.run([feeds[i.name] for i in model.graph.input
                         if i.name in feeds])


def reference(model: onnx.ModelProto, feeds: dict, engine: str = "reference"
              ) -> list[np.ndarray]:
    if engine == "onnxruntime":
        import onnxruntime as ort
        s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return s.run(None, feeds)
    from onnx.reference import ReferenceEvaluator
    return [np.asarray(x) for x in ReferenceEvaluator(model).run(None, feeds)]


def assert_match(got: list, expected: list, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    assert len(got) == len(expected), (len(got), len(expected))
    for i, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype, \
            f"output {i}: got {g.shape} {g.dtype}, expected {e.shape} {e.dtype}"
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


def check_compiled(model: onnx.ModelProto, feeds: dict, rtol: float = 1e-5, atol: float = 1e-5,
                   opt_level: int = 0, engine: str = "reference") -> list[np.ndarray]:
    got = run_compiled(model, feeds, opt_level)
    assert_match(got, reference(model, feeds, engine), rtol, atol)
    return got
