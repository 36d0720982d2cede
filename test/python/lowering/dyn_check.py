"""Compile a model ONCE (with dynamic dims / run-time shape values) and
compare it with onnxruntime on several feeds (different run-time shapes
and values)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

ELEM = {np.dtype(np.float32): T.FLOAT, np.dtype(np.int64): T.INT64,
        np.dtype(np.int32): T.INT32, np.dtype(np.uint8): T.UINT8, np.dtype(np.bool_): T.BOOL}


def model(nodes, inputs, outputs, inits=(), opset=18):
    """inputs: [(name, elem type, shape with str dims for dynamic ones)];
    outputs: names (float, no declared shape) or (name, elem type)."""
    outputs = [(o, T.FLOAT) if isinstance(o, str) else o for o in outputs]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(o, t, None) for o, t in outputs],
                     initializer=[onnx.numpy_helper.from_array(v, k) for k, v in inits])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def compile_once(m, tmp_path, opt_level=0) -> ExecutionSession:
    return ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{opt_level}.so",
                                                 opt_level=opt_level))


def check_feeds(m, sess: ExecutionSession, feeds: list[list[np.ndarray]], rtol=1e-5,
                atol=1e-6):
    """Run ``sess`` on every feed and compare with onnxruntime."""
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in m.graph.input]
    for feed in feeds:
        want = ref.run(None, dict(zip(names, feed)))
        got = sess.run(list(feed))
        shapes = [getattr(f, "shape", f) for f in feed]
        for g, w in zip(got, want):
            assert g.shape == w.shape, (shapes, g.shape, w.shape)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=str(shapes))
            else:
                np.testing.assert_array_equal(g, w, err_msg=str(shapes))
