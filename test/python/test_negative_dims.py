"""Declared dims below 0 (#31 class 2): Paddle2ONNX writes ``dim_value: -1``
for a dynamic dim, and onnxruntime reads every negative value as unknown.
So do we, with one warning naming the value: the model compiles once and
matches onnxruntime at several run-time shapes."""
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.errors import NegativeDimWarning


def _paddle_style(dim=-1, where="input"):
    """Conv 3->4 (3x3, pad 1) + Relu + Flatten over x [dim, 3, 8, 8] as
    Paddle2ONNX declares it: the batch dim as a negative dim_value."""
    rng = np.random.default_rng(0)
    w = nh.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = nh.from_array(rng.standard_normal(4).astype(np.float32), "b")
    x = h.make_tensor_value_info("x", T.FLOAT, [dim if where == "input" else "N", 3, 8, 8])
    y = h.make_tensor_value_info("y", T.FLOAT, [dim if where == "output" else "N", 256])
    vis = [h.make_tensor_value_info("r", T.FLOAT, [dim, 4, 8, 8])] if where == "value_info" else []
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                      h.make_node("Relu", ["c"], ["r"], name="relu"),
                      h.make_node("Flatten", ["r"], ["y"], name="flat")],
                     "paddle", [x], [y], [w, b], value_info=vis)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("dim,where", [(-1, "input"), (-2, "input"), (-1, "output"),
                                       (-1, "value_info")])
def test_negative_dim_is_dynamic(dim, where, tmp_path):
    m = _paddle_style(dim, where)
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        so = onnx_mlir_py.compile(str(path), tmp_path / "m.so", opt_level=3)
    ours = [w for w in caught if issubclass(w.category, NegativeDimWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    name = {"input": "x", "output": "y", "value_info": "r"}[where]
    assert f"'{name}'" in str(ours[0].message) and str(dim) in str(ours[0].message)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    sess = onnx_mlir_py.ExecutionSession(so)
    for n in (1, 3, 5):
        x = np.random.default_rng(n).standard_normal((n, 3, 8, 8)).astype(np.float32)
        got = sess.run([x])[0]
        want = ref.run(None, {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_negative_dim_in_a_subgraph_and_a_sequence_is_read_too():
    from onnx_mlir_py.importer.validate import validate_model
    then = h.make_graph([h.make_node("Relu", ["x"], ["t"], name="tr")], "then_g", [],
                        [h.make_tensor_value_info("t", T.FLOAT, [-1])])
    els = h.make_graph([h.make_node("Neg", ["x"], ["e"], name="en")], "else_g", [],
                       [h.make_tensor_value_info("e", T.FLOAT, [-1])])
    g = h.make_graph([h.make_node("If", ["c"], ["y"], name="if1", then_branch=then,
                                  else_branch=els),
                      h.make_node("SequenceConstruct", ["x"], ["s"], name="sc")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [2]),
                      h.make_tensor_value_info("c", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2]),
                      h.make_tensor_sequence_value_info("s", T.FLOAT, [-3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = validate_model(m)
    msgs = sorted(str(w.message) for w in caught if issubclass(w.category, NegativeDimWarning))
    assert len(msgs) == 3, msgs
    assert any("node 'if1' (If), subgraph 'then_g'" in s and "'t'" in s for s in msgs), msgs
    assert any("graph output 's'" in s and "-3" in s for s in msgs), msgs
    # the returned copy has unknown dims; the caller's model is untouched
    assert not out.graph.node[0].attribute[0].g.output[0].type.tensor_type.shape.dim[0] \
        .HasField("dim_value")
    assert m.graph.output[1].type.sequence_type.elem_type.tensor_type.shape.dim[0].dim_value == -3


def test_cli_prints_one_warning_line(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_paddle_style(-1, "input"), str(path))
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path), "--EmitONNXIR",
                        "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: graph input 'x'"), r.stderr
    assert "dynamic" in lines[0]
