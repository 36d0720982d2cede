"""-O3 multi-threaded elementwise code: ops with at least
``THREAD_MIN_WORK`` units of work (bias adds, activations, softmax rows,
layer-norm pieces, transposes) get an ``scf.forall`` that runs on the
model library's thread pool (passes/optimize/elementwise.py). Each model is
compiled once at opt_level=3 and run with 1, 2 and 3 threads against
``onnx.reference.ReferenceEvaluator``; odd sizes exercise the masked tails
and partial tasks, small leading dims the 2-D/3-D foralls. The numerics
tests lower the threshold (``low_threshold``) so that every op of their
moderately sized models is distributed; the pool tests use the real one."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.passes.optimize import elementwise
from onnx_mlir_py.runtime import ExecutionSession

R = np.random.default_rng(11)
N = h.make_node
THREADS = (1, 2, 3)


def rand(*shape):
    return R.standard_normal(shape).astype(np.float32)


class Cases:
    """Independent subgraphs in one model (one -O3 compile), one output each."""

    def __init__(self):
        self.nodes, self.inputs, self.inits, self.outputs, self.feeds = [], [], [], [], {}

    def input(self, name, value):
        self.inputs.append(h.make_tensor_value_info(name, T.FLOAT, list(value.shape)))
        self.feeds[name] = value

    def weight(self, name, value):
        self.inits.append(nh.from_array(np.asarray(value, np.float32), name))

    def model(self):
        g = h.make_graph(self.nodes, "g", self.inputs,
                         [h.make_tensor_value_info(o, T.FLOAT, None) for o in self.outputs],
                         self.inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def check_threads(tmp_path, c: Cases, rtol=1e-4, atol=1e-5, split=False):
    """Compile, run at 1, 2 and 3 threads, compare; ``split``: the pool
    workers must have run tasks at 2 and 3 threads."""
    m = c.model()
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    want = ReferenceEvaluator(m).run(None, c.feeds)
    for n in THREADS:
        sess = ExecutionSession(so, num_threads=n)
        before = pool_task_count(so)
        got = sess.run([c.feeds[s.name] for s in sess.input_specs])
        if split and n > 1:
            assert pool_task_count(so) - before >= 2, f"no pool tasks at {n} threads"
        for name, g, w in zip(c.outputs, got, want):
            assert g.shape == w.shape, name
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                       err_msg=f"{name} at {n} threads")
    return so


def pool_task_count(so):
    """Tasks the pool workers ran so far, or None when the library has no
    thread pool (no parallel loop at all)."""
    try:
        f = ctypes.CDLL(str(so)).omGetPoolTaskCount
    except AttributeError:
        return None
    f.restype = ctypes.c_int64
    return f()


@pytest.fixture
def low_threshold(monkeypatch):
    """Distribute every elementwise op of >= 2^12 units (compiles in-process)."""
    monkeypatch.setattr(elementwise, "THREAD_MIN_WORK", 1 << 12)


def test_elementwise_broadcast_and_activations(tmp_path, low_threshold):
    c = Cases()
    # bias add (broadcast row) + ReLU, odd row 257 (> 256: 64-lane chunks, masked tail)
    c.input("x", rand(256, 257))
    c.weight("b", rand(257))
    c.nodes += [N("Add", ["x", "b"], ["xb"]), N("Relu", ["xb"], ["relu"])]
    # small leading dims (2 x 3 < 8 tasks): a 3-D forall; broadcast over dims 0 and 3
    c.input("y", rand(2, 3, 97, 131))
    c.input("s", rand(1, 3, 97, 1))
    c.nodes += [N("Mul", ["y", "s"], ["ys"]), N("Sigmoid", ["ys"], ["sig"]),
                N("Mul", ["ys", "sig"], ["silu"])]
    # exact GELU (erf) on a [1, 128, 515] activation, leading unit dim
    c.input("g", rand(1, 128, 515))
    c.weight("rs2", np.float32(1 / np.sqrt(2)))
    c.weight("half", np.float32(0.5))
    c.weight("one", np.float32(1.0))
    c.nodes += [N("Mul", ["g", "rs2"], ["g1"]), N("Erf", ["g1"], ["g2"]),
                N("Add", ["g2", "one"], ["g3"]), N("Mul", ["g", "g3"], ["g4"]),
                N("Mul", ["g4", "half"], ["gelu"])]
    # 1-D (only the innermost loop: a forall over vector chunks), odd length
    c.input("v", rand(100003))
    c.nodes += [N("Tanh", ["v"], ["tanh"])]
    # column broadcast [R, 1] against [1, C], [R, C] result
    c.input("col", rand(515, 1))
    c.input("row", rand(1, 130))
    c.nodes += [N("Sub", ["col", "row"], ["outer"])]
    c.outputs += ["relu", "silu", "gelu", "tanh", "outer"]
    check_threads(tmp_path, c, split=True)


def test_softmax_layernorm_transpose(tmp_path, low_threshold):
    c = Cases()
    # attention-style softmax rows: short rows (whole-row reductions) and long ones
    c.input("att", rand(1, 4, 129, 130))
    c.nodes += [N("Softmax", ["att"], ["sm_short"], axis=-1)]
    c.input("att2", rand(3, 50, 601))
    c.nodes += [N("Softmax", ["att2"], ["sm_long"], axis=-1)]
    # layer norm written out (ReduceMean / Sub / Mul / Sqrt / Div / scale + shift)
    c.input("ln", rand(2, 130, 257))
    c.weight("gamma", rand(257))
    c.weight("beta", rand(257))
    c.weight("eps", np.float32(1e-5))
    c.nodes += [N("ReduceMean", ["ln"], ["mu"], axes=[-1]),
                N("Sub", ["ln", "mu"], ["xc"]), N("Mul", ["xc", "xc"], ["sq"]),
                N("ReduceMean", ["sq"], ["var"], axes=[-1]),
                N("Add", ["var", "eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]),
                N("Div", ["xc", "sd"], ["xn"]), N("Mul", ["xn", "gamma"], ["xg"]),
                N("Add", ["xg", "beta"], ["layernorm"])]
    # the fused op too
    c.input("ln2", rand(1, 128, 300))
    c.nodes += [N("LayerNormalization", ["ln2", "gamma3", "beta3"], ["layernorm2"], axis=-1)]
    c.weight("gamma3", rand(300))
    c.weight("beta3", rand(300))
    # transposes keeping the innermost dim (vectorized copies) and moving it
    c.input("tr", rand(64, 33, 41))
    c.nodes += [N("Transpose", ["tr"], ["tr_keep"], perm=[1, 0, 2])]
    c.input("tr4", rand(1, 128, 4, 130))
    c.nodes += [N("Transpose", ["tr4"], ["tr_heads"], perm=[0, 2, 1, 3])]
    c.nodes += [N("Transpose", ["tr"], ["tr_move"], perm=[2, 0, 1])]
    # a pad (around a big op)
    c.input("pd", rand(1, 8, 97, 99))
    c.nodes += [N("Relu", ["pd"], ["pd_relu"]),
                N("Pad", ["pd_relu", "pads"], ["padded"])]
    c.inits.append(nh.from_array(np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "pads"))
    c.outputs += ["sm_short", "sm_long", "layernorm", "layernorm2", "tr_keep", "tr_heads",
                  "tr_move", "padded"]
    check_threads(tmp_path, c, rtol=1e-4, atol=1e-4, split=True)


def _add_relu_model(shape):
    c = Cases()
    c.input("a", rand(*shape))
    c.input("b", rand(*shape))
    c.nodes += [N("Add", ["a", "b"], ["s"]), N("Relu", ["s"], ["out"])]
    c.outputs += ["out"]
    return c


def test_big_elementwise_split_across_pool(tmp_path):
    """A model of big elementwise ops only: at 2 threads its loops are split
    into tasks that pool workers run."""
    c = _add_relu_model((2048, 2060))
    assert 2048 * 2060 >= elementwise.THREAD_MIN_WORK
    so = check_threads(tmp_path, c)
    sess = ExecutionSession(so, num_threads=2)
    before = pool_task_count(so)
    assert before is not None, "no thread pool in a library with a big elementwise op"
    out = sess.run([c.feeds["a"], c.feeds["b"]])[0]
    np.testing.assert_allclose(out, np.maximum(c.feeds["a"] + c.feeds["b"], 0), rtol=1e-6)
    assert pool_task_count(so) - before >= 2


def test_small_elementwise_stays_serial(tmp_path):
    """Below the threshold the op runs on the calling thread: no pool task."""
    c = _add_relu_model((64, 100))
    so = check_threads(tmp_path, c)
    sess = ExecutionSession(so, num_threads=2)
    before = pool_task_count(so)
    sess.run([c.feeds["a"], c.feeds["b"]])
    after = pool_task_count(so)
    assert before is None or after == before


@pytest.mark.parametrize("threads_env", ["0"])
def test_threads_off_at_compile_time(tmp_path, monkeypatch, threads_env):
    """ONNX_MLIR_PY_O3_THREADS=0 builds single-threaded code: no pool."""
    monkeypatch.setenv("ONNX_MLIR_PY_O3_THREADS", threads_env)
    c = _add_relu_model((2048, 2060))
    so = check_threads(tmp_path, c)
    sess = ExecutionSession(so, num_threads=2)
    before = pool_task_count(so)
    sess.run([c.feeds["a"], c.feeds["b"]])
    assert before is None or pool_task_count(so) == before
