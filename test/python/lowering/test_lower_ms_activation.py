"""com.microsoft Gelu, BiasGelu, FastGelu (with / without bias), QuickGelu
(default and other alphas) and BiasAdd against onnxruntime, at -O0 and -O3,
f32 / f16 (/ f64 where onnxruntime runs it), each model compiled once and
run at two sizes of its dynamic batch dim; and the refusals (bias shapes,
element types onnxruntime's CPU provider cannot run, run-time checks).

BiasAdd has no CPU kernel in onnxruntime (CUDA only): its oracle is
onnxruntime running the same inputs through ``Add(Add(X, bias), skip)``."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from dynamic_util import check_rejects, check_shapes, model
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import reference

R = np.random.default_rng(7)
C = 16
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64}
TOL = {T.FLOAT: (1e-5, 1e-6), T.FLOAT16: (2e-3, 1e-3), T.DOUBLE: (1e-5, 1e-7)}


def _ms(op, ins, out, **attrs):
    return h.make_node(op, ins, [out], domain="com.microsoft", name=f"{op}_{out}", **attrs)


def _feeds(dt, names_shapes, batches=(1, 5), scale=3.0):
    return [{n: (R.standard_normal([b if d == "n" else d for d in s]) * scale).astype(NP[dt])
             for n, s in names_shapes} for b in batches]


def _gelus(dt, with_gelu=True):
    nodes = [_ms("FastGelu", ["x", "bias"], "fast_b"), _ms("FastGelu", ["x"], "fast"),
             _ms("QuickGelu", ["x"], "quick"), _ms("QuickGelu", ["x"], "quick_a", alpha=-0.75)]
    if with_gelu:
        nodes += [_ms("Gelu", ["x"], "gelu"), _ms("BiasGelu", ["x", "bias"], "bias_gelu")]
    outs = [(n.output[0], dt, None) for n in nodes]
    m = model(nodes, [("x", dt, ["n", 3, C]), ("bias", dt, [C])], outs, ms_opset=1)
    return m, _feeds(dt, [("x", ["n", 3, C]), ("bias", [C])])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt", [T.FLOAT, T.FLOAT16])
def test_gelu_family(tmp_path, opt_level, dt):
    m, feeds = _gelus(dt)
    rtol, atol = TOL[dt]
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, rtol=rtol, atol=atol,
                 engine="onnxruntime")


def test_fast_quick_gelu_f64(tmp_path):
    """f64: onnxruntime runs their function bodies; FastGelu's has its
    constants rounded to 6 digits (0.797885, 0.035677, as in its doc); its
    f32 kernel has sqrt(2/pi) and 0.044715 sqrt(2/pi), this lowering (ONNX
    Gelu's tanh body, unary.py) the same to float32 precision: up to 2.1e-7
    apart for |x| <= 12 (QuickGelu: 1e-15)."""
    m, feeds = _gelus(T.DOUBLE, with_gelu=False)
    check_shapes(tmp_path, m, feeds, opt_level=3, rtol=1e-5, atol=1e-6, engine="onnxruntime")


def test_gelu_rank0_and_1d(tmp_path):
    nodes = [_ms("Gelu", ["s"], "g0"), _ms("QuickGelu", ["s"], "q0", alpha=2.5),
             _ms("FastGelu", ["v", "vb"], "f1"), _ms("BiasGelu", ["v", "vb"], "b1")]
    m = model(nodes, [("s", T.FLOAT, []), ("v", T.FLOAT, ["c"]), ("vb", T.FLOAT, ["c"])],
              [(n.output[0], T.FLOAT, None) for n in nodes], ms_opset=1)
    feeds = [{"s": np.array(x, np.float32), "v": R.standard_normal(c).astype(np.float32),
              "vb": R.standard_normal(c).astype(np.float32)} for x, c in ((0.7, 3), (-2.0, 9))]
    check_shapes(tmp_path, m, feeds, opt_level=0, engine="onnxruntime")


def _bias_add(dt):
    shape = ["n", "s", C]
    m = model([_ms("BiasAdd", ["x", "bias", "skip"], "y")],
              [("x", dt, shape), ("bias", dt, [C]), ("skip", dt, shape)], [("y", dt, None)],
              ms_opset=1)
    ref = model([h.make_node("Add", ["x", "bias"], ["t"]), h.make_node("Add", ["t", "skip"], ["y"])],
                [("x", dt, shape), ("bias", dt, [C]), ("skip", dt, shape)], [("y", dt, None)])
    feeds = [{"x": R.standard_normal((n, s, C)).astype(NP[dt]),
              "bias": R.standard_normal(C).astype(NP[dt]),
              "skip": R.standard_normal((n, s, C)).astype(NP[dt])} for n, s in ((1, 4), (3, 7))]
    return m, ref, feeds


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt", [T.FLOAT, T.FLOAT16])
def test_bias_add(tmp_path, opt_level, dt):
    m, ref, feeds = _bias_add(dt)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    rtol, atol = TOL[dt]
    for f in feeds:
        got, = sess.run([f["x"], f["bias"], f["skip"]])
        want, = reference(ref, f, "onnxruntime")
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# -- refusals ----------------------------------------------------------------------

def _compile(tmp_path, m):
    return onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


@pytest.mark.parametrize("op,bias_shape,match", [
    ("BiasGelu", [C + 1], r"BiasGelu.*input 'B' has shape \[17\]: expected 16 elements"),
    ("FastGelu", [C + 1], r"FastGelu.*input 'bias' has shape \[17\]: expected 16 elements"),
    ("FastGelu", [1, C], r"FastGelu.*input 'bias' has shape \[1x16\]: expected rank 1"),
    ("BiasGelu", [1], r"BiasGelu.*input 'B' has shape \[1\]: expected 16 elements"),
])
def test_bad_bias_shape(tmp_path, op, bias_shape, match):
    m = model([_ms(op, ["x", "b"], "y")], [("x", T.FLOAT, ["n", C]), ("b", T.FLOAT, bias_shape)],
              [("y", T.FLOAT, None)], ms_opset=1)
    with pytest.raises(Exception, match=match):
        _compile(tmp_path, m)


def test_bias_size_checked_at_run_time(tmp_path):
    """A dynamic bias length that is not X's last dim (1 included: no
    broadcasting) stops the call naming the node."""
    m = model([_ms("BiasGelu", ["x", "b"], "y")], [("x", T.FLOAT, ["n", C]), ("b", T.FLOAT, ["c"])],
              [("y", T.FLOAT, None)], ms_opset=1)
    feeds = [{"x": np.ones((2, C), np.float32), "b": np.ones(c, np.float32)} for c in (1, C - 1)]
    check_rejects(tmp_path, m, feeds, r"BiasGelu.*B dim 0 is \d+ but X dim 1 is 16")


def test_bias_add_refusals(tmp_path):
    m = model([_ms("BiasAdd", ["x", "b", "s"], "y")],
              [("x", T.FLOAT, [2, 3, C]), ("b", T.FLOAT, [C]), ("s", T.FLOAT, [2, 4, C])],
              [("y", T.FLOAT, None)], ms_opset=1)
    with pytest.raises(Exception, match=r"BiasAdd.*input 'skip' has shape \[2x4x16\]: expected "
                                        r"X's shape \[2x3x16\]"):
        _compile(tmp_path, m)
    m = model([_ms("BiasAdd", ["x", "b", "s"], "y")],
              [("x", T.FLOAT, [6, C]), ("b", T.FLOAT, [C]), ("s", T.FLOAT, [6, C])],
              [("y", T.FLOAT, None)], ms_opset=1)
    with pytest.raises(Exception, match=r"BiasAdd.*input 'X' has shape \[6x16\]: expected rank 3"):
        _compile(tmp_path, m)
    m = model([_ms("BiasAdd", ["x", "b", "s"], "y")],
              [("x", T.FLOAT, ["n", 3, C]), ("b", T.FLOAT, [C]), ("s", T.FLOAT, ["m", 3, C])],
              [("y", T.FLOAT, None)], ms_opset=1)
    feeds = [{"x": np.ones((2, 3, C), np.float32), "b": np.ones(C, np.float32),
              "s": np.ones((3, 3, C), np.float32)}]
    check_rejects(tmp_path, m, feeds, r"BiasAdd.*skip dim 0 is 3 but X dim 0 is 2")


@pytest.mark.parametrize("op,dt,match", [
    ("Gelu", T.DOUBLE, "Gelu.*element type double is not supported"),
    ("BiasGelu", T.DOUBLE, "BiasGelu.*element type double is not supported"),
    ("QuickGelu", T.BFLOAT16, "QuickGelu.*element type bfloat16 is not supported"),
])
def test_unsupported_types(tmp_path, op, dt, match):
    ins = ["x", "b"] if op == "BiasGelu" else ["x"]
    m = model([_ms(op, ins, "y")], [("x", dt, [2, C]), ("b", dt, [C])], [("y", dt, None)],
              ms_opset=1)
    with pytest.raises(Exception, match=match):
        _compile(tmp_path, m)


def test_fast_gelu_scalar_refused(tmp_path):
    m = model([_ms("FastGelu", ["x"], "y")], [("x", T.FLOAT, [])], [("y", T.FLOAT, None)],
              ms_opset=1)
    with pytest.raises(Exception, match="FastGelu.*input 'X' is a scalar: expected rank >= 1"):
        _compile(tmp_path, m)
