"""Compile an ONNX model with dynamic input dims ONCE and compare it with
onnx.reference at several run-time shapes (a dynamic dim is only tested
when more than one value of it is run); model builders and sessions."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession


def model(nodes, inputs, outputs=("y",), opset=17, inits=(), ms_opset=None):
    """inputs: [(name, onnx elem type, dims with str/None for dynamic)];
    outputs: names (left untyped: the compiler infers them) or such triples.
    ``ms_opset``: also import onnxruntime's ``com.microsoft`` domain (its
    contrib ops, node domain "com.microsoft") at that version."""
    outs = [h.make_tensor_value_info(o, 0, None) if isinstance(o, str) else
            h.make_tensor_value_info(*o) for o in outputs]
    g = h.make_graph(list(nodes), "g",
                     [h.make_tensor_value_info(n, t, s) for n, t, s in inputs], outs,
                     initializer=list(inits))
    imports = [h.make_opsetid("", opset)]
    if ms_opset is not None:
        imports.append(h.make_opsetid("com.microsoft", ms_opset))
    m = h.make_model(g, opset_imports=imports)
    m.ir_version = 8
    return m


def vi(name, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def vi_model(nodes, inputs, outputs, opset=17):
    """A model of ``nodes`` whose inputs and outputs are given as value infos
    (:func:`vi`, sequence / optional types)."""
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def session(model, tmp_path, opt_level=0):
    """``model`` compiled at ``opt_level`` (a file per level in ``tmp_path``)."""
    return ExecutionSession(onnx_mlir_py.compile(model, tmp_path / f"m{opt_level}.so",
                                                 opt_level=opt_level))


def check_shapes(tmp_path, m, feed_sets, opt_level=0, rtol=1e-5, atol=1e-6,
                 engine="reference"):
    """Compile ``m`` once; for each feed dict, outputs must match onnx.reference
    (or onnxruntime: ``engine="onnxruntime"``)."""
    from onnx_mlir_py.testing.check import reference
    names = [i.name for i in m.graph.input
             if i.name not in {t.name for t in m.graph.initializer}]
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    for feeds in feed_sets:
        want = reference(m, feeds, engine)
        got = sess.run([feeds[n] for n in names])
        shapes = {k: v.shape for k, v in feeds.items()}
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.shape == w.shape, (shapes, g.shape, w.shape)
            assert g.dtype == w.dtype, (shapes, g.dtype, w.dtype)
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=str(shapes))
            else:
                np.testing.assert_array_equal(g, w, err_msg=str(shapes))


def check_rejects(tmp_path, m, feed_sets, match, opt_level=0):
    """Compile ``m`` once; each feed dict must fail with RuntimeInputError
    matching ``match`` (a run-time check in the compiled code)."""
    import pytest
    from onnx_mlir_py.runtime import RuntimeInputError
    names = [i.name for i in m.graph.input
             if i.name not in {t.name for t in m.graph.initializer}]
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    for feeds in feed_sets:
        with pytest.raises(RuntimeInputError, match=match):
            sess.run([feeds[n] for n in names])
