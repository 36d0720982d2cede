"""Index VALUES read from data are range-checked before the kernel runs
(passes/onnx_to_linalg/index_bounds.py): Gather, GatherElements, GatherND,
Scatter, ScatterElements, ScatterND and RNN/GRU/LSTM sequence_lens. Each model
is compiled once, matches onnxruntime at two valid index sets (with negative
indices) and raises RuntimeInputError naming the node, the value and the
axis size for out-of-range ones of both signs (onnxruntime rejects them too);
before the checks, these read or wrote out of bounds (SIGSEGV for 2**40).
Constant indices are checked at compile time."""
from __future__ import annotations

import subprocess

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

from onnx_models import graph_model as _model
from test_c_example import _build_example

F, I64, I32 = T.FLOAT, T.INT64, T.INT32
BIG = 2 ** 40


def _case(tmp_path, m, good, bad, match, opt_level=3):
    """good/bad: lists of input lists (numpy arrays in graph input order)."""
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in m.graph.input]
    for feeds in good:
        for g, e in zip(sess.run(feeds), ref.run(None, dict(zip(names, feeds)))):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    for feeds in bad:
        with pytest.raises(RuntimeInputError, match=match):
            sess.run(feeds)
        with pytest.raises(Exception):       # onnxruntime rejects it too
            ref.run(None, dict(zip(names, feeds)))
    # the session still works after a failed check
    np.testing.assert_allclose(sess.run(good[0])[0], ref.run(None, dict(zip(names, good[0])))[0],
                               rtol=1e-5, atol=1e-6)
    return sess


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5 - 1


def _i(v, dt=np.int64):
    return np.asarray(v, dt)


def _oob(what, value, lo, hi, size):
    return (rf"{what} {value} is out of range \[{lo}, {hi}\] for data axis .*\(size {size}\)")


# -- gathers ------------------------------------------------------------------------
@pytest.mark.parametrize("opt_level", [0, 3])
def test_gather(tmp_path, opt_level):
    m = _model(h.make_node("Gather", ["x", "i"], ["y"], name="gat", axis=1),
               [("x", F, [None, None]), ("i", I64, [None, 2])])
    node = r"node 'gat' \(Gather\): "
    x = _x(2, 4)
    _case(tmp_path, m, good=[[x, _i([[0, -1], [3, -4]])], [_x(3, 5), _i([[4, -5]])]],
          bad=[[x, _i([[0, 4]])], [x, _i([[-5, 1]])], [x, _i([[1, BIG]])]],
          match=node + _oob("index", r"(4|-5|1099511627776)", -4, 3, 4), opt_level=opt_level)
    sess = ExecutionSession(str(tmp_path / "m.so"))
    with pytest.raises(RuntimeInputError, match=node + r"index -1099511627776 is out of range"):
        sess.run([x, _i([[-BIG, 0]])])


def test_gather_scalar_index(tmp_path):
    m = _model(h.make_node("Gather", ["x", "i"], ["y"], name="g0", axis=0),
               [("x", F, [None, 3]), ("i", I32, [])])
    _case(tmp_path, m, good=[[_x(4, 3), _i(3, np.int32)], [_x(2, 3), _i(-2, np.int32)]],
          bad=[[_x(4, 3), _i(4, np.int32)], [_x(4, 3), _i(-5, np.int32)]],
          match=r"node 'g0' \(Gather\): index (4|-5) is out of range \[-4, 3\]")


def test_gather_elements(tmp_path):
    m = _model(h.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=0),
               [("x", F, [None, None]), ("i", I32, [None, None])])
    x = _x(3, 4)
    _case(tmp_path, m,
          good=[[x, _i([[0, 1, 2, -1], [-3, -2, 0, 0]], np.int32)], [x, _i([[2], [-3]], np.int32)]],
          bad=[[x, _i([[0, 3]], np.int32)], [x, _i([[0, -4]], np.int32)]],
          match=r"node 'ge' \(GatherElements\): index (3|-4) is out of range \[-3, 2\] "
                r"for data axis 0 \(size 3\)")


def test_gather_nd(tmp_path):
    m = _model(h.make_node("GatherND", ["x", "i"], ["y"], name="gnd", batch_dims=1),
               [("x", F, [None, None, None, 2]), ("i", I64, [None, None, 2])], opset=13)
    x = _x(2, 3, 5, 2)
    _case(tmp_path, m, good=[[x, _i([[[0, 4], [-3, -1]], [[2, 0], [1, -5]]])],
                             [x, _i([[[1, 1]], [[-1, -2]]])]],
          bad=[[x, _i([[[0, 5]], [[0, 0]]])], [x, _i([[[0, 0]], [[-4, 0]]])],
               [x, _i([[[BIG, 0]], [[0, 0]]])]],
          match=r"node 'gnd' \(GatherND\): index \(indices\[\.\.\., (1\]\) 5 is out of range "
                r"\[-5, 4\] for data axis 2|0\]\) (-4|1099511627776) is out of range \[-3, 2\] "
                r"for data axis 1)")


# -- scatters ----------------------------------------------------------------------
def test_scatter_elements(tmp_path):
    m = _model(h.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="se", axis=1,
                           reduction="add"),
               [("x", F, [None, None]), ("i", I64, [None, None]), ("u", F, [None, None])],
               opset=18)
    x = _x(2, 3)
    _case(tmp_path, m, good=[[x, _i([[0, -1], [2, -3]]), _x(2, 2)], [x, _i([[-2]]), _x(1, 1)]],
          bad=[[x, _i([[0, 3]]), _x(1, 2)], [x, _i([[-4, 0]]), _x(1, 2)],
               [x, _i([[0, -BIG]]), _x(1, 2)]],
          match=r"node 'se' \(ScatterElements\): index (3|-4|-1099511627776) is out of "
                r"range \[-3, 2\] for data axis 1 \(size 3\)")


def test_scatter_opset10(tmp_path):
    m = _model(h.make_node("Scatter", ["x", "i", "u"], ["y"], name="sc", axis=0),
               [("x", F, [None, 2]), ("i", I64, [None, 2]), ("u", F, [None, 2])], opset=10)
    x = _x(3, 2)
    _case(tmp_path, m, good=[[x, _i([[0, -1]]), _x(1, 2)], [x, _i([[2, 1], [-3, -2]]), _x(2, 2)]],
          bad=[[x, _i([[3, 0]]), _x(1, 2)], [x, _i([[0, BIG]]), _x(1, 2)]],
          match=r"node 'sc' \(Scatter\): index (3|1099511627776) is out of range \[-3, 2\]")


def test_scatter_nd(tmp_path):
    m = _model(h.make_node("ScatterND", ["x", "i", "u"], ["y"], name="snd"),
               [("x", F, [None, None, 2]), ("i", I64, [None, 2]), ("u", F, [None, 2])],
               opset=16)
    x = _x(3, 4, 2)
    _case(tmp_path, m, good=[[x, _i([[0, -1], [2, 3]]), _x(2, 2)], [x, _i([[-3, -4]]), _x(1, 2)]],
          bad=[[x, _i([[3, 0]]), _x(1, 2)], [x, _i([[0, -5]]), _x(1, 2)],
               [x, _i([[0, BIG]]), _x(1, 2)]],
          match=r"node 'snd' \(ScatterND\): index \(indices\[\.\.\., (0\]\) 3 is out of range "
                r"\[-3, 2\] for data axis 0|1\]\) (-5|1099511627776) is out of range \[-4, 3\] "
                r"for data axis 1)")


# -- sequence_lens ---------------------------------------------------------------------
@pytest.mark.parametrize("kind,gates", [("RNN", 1), ("GRU", 3), ("LSTM", 4)])
def test_rnn_sequence_lens(tmp_path, kind, gates):
    H, I = 3, 2
    rng = np.random.default_rng(0)
    w = h.make_tensor("w", F, [2, gates * H, I], rng.standard_normal(2 * gates * H * I) * 0.5)
    r = h.make_tensor("r", F, [2, gates * H, H], rng.standard_normal(2 * gates * H * H) * 0.5)
    m = _model(h.make_node(kind, ["x", "w", "r", "", "sl"], ["y", "yh"], name="rnn",
                           hidden_size=H, direction="bidirectional"),
               [("x", F, [None, None, I]), ("sl", I32, [None])], outputs=("y", "yh"),
               opset=14, inits=[w, r])
    sl = lambda *v: _i(v, np.int32)     # noqa: E731
    _case(tmp_path, m, good=[[_x(4, 2, I), sl(4, 2)], [_x(3, 3, I), sl(1, 3, 2)]],
          bad=[[_x(4, 2, I), sl(5, 2)], [_x(4, 2, I), sl(1, -1)]],
          match=rf"node 'rnn' \({kind}\): sequence_lens element (5|-1) is out of range "
                r"\[0, 4\] for the sequence \(X's time dim\) \(size 4\)")


# -- constant indices: compile time ----------------------------------------------------
def test_constant_indices_fail_at_compile_time(tmp_path):
    idx = h.make_tensor("i", I64, [2, 2], [0, 1, 2, 5])
    m = _model(h.make_node("GatherND", ["x", "i"], ["y"], name="gndc"),
               [("x", F, [None, 4])], inits=[idx], opset=13)
    with pytest.raises(OnnxMlirError, match=r"node 'gndc' \(GatherND\).*index \(indices\[\.\.\., "
                       r"1\]\) 5 is out of range \[-4, 3\] for data axis 1"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")
    idx = h.make_tensor("i", I64, [2], [0, -3])
    m = _model(h.make_node("GatherElements", ["x", "i"], ["y"], name="gec"),
               [("x", F, [2])], inits=[idx], opset=13)
    with pytest.raises(OnnxMlirError, match=r"node 'gec' \(GatherElements\).*index -3 is out "
                       r"of range \[-2, 1\]"):
        onnx_mlir_py.compile(m, tmp_path / "m2.so")


def test_constant_indices_no_runtime_check(tmp_path):
    """In range constant indices emit no run-time check (against a static
    dim); against a dynamic dim only two scalar comparisons."""
    idx = h.make_tensor("i", I64, [2], [1, -2])
    m = _model(h.make_node("Gather", ["x", "i"], ["y"], name="gc", axis=1),
               [("x", F, [None, 3])], inits=[idx])
    mlir = onnx_mlir_py.compile(m, tmp_path / "c.mlir", emit="EmitMLIR")
    text = open(mlir).read()
    assert "linalg.generic" in text and "out of range" not in text
    m2 = _model(h.make_node("Gather", ["x", "i"], ["y"], name="gd", axis=1),
                [("x", F, [2, None])], inits=[idx])
    _case(tmp_path, m2, good=[[_x(2, 3)], [_x(2, 2)]], bad=[[_x(2, 1)]],
          match=r"node 'gd' \(Gather\): index (1|-2) is out of range \[-1, 0\] .*\(size 1\)")


# -- from C --------------------------------------------------------------------------
def test_gather_bad_index_from_c(tmp_path):
    exe = _build_example(tmp_path)
    m = _model(h.make_node("Gather", ["x", "i"], ["y"], name="gat", axis=0),
               [("x", F, [4, 3]), ("i", I64, [None])])
    so = onnx_mlir_py.compile(m, tmp_path / "g.so")
    _x(4, 3).tofile(tmp_path / "x.bin")
    _i([1, -4]).tofile(tmp_path / "ok.bin")
    _i([1, BIG]).tofile(tmp_path / "bad.bin")
    p = subprocess.run([exe, str(so), str(tmp_path / "x.bin"), f"{tmp_path / 'ok.bin'}:2"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([exe, str(so), str(tmp_path / "x.bin"), f"{tmp_path / 'bad.bin'}:2"],
                       capture_output=True, text=True)
    assert p.returncode != 0 and p.returncode > 0         # an error, not a signal
    assert "node 'gat' (Gather): index 1099511627776 is out of range [-4, 3] for data axis 0 " \
        "(size 4)" in p.stdout + p.stderr
