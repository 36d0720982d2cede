"""-O3 polynomial approximations of f32 exp / erf / tanh / log
(``passes/optimize/math_approx.py``): compiled models against float64 numpy
references, on large inputs including special values. The measured maxima
are in the module docstring of math_approx.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

F = np.float32
R = np.random.default_rng(11)
N = 1 << 18                       # random values per input, besides the grids/specials
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, -1e-38, 1e-30, -1e-30,
            1e-7, -1e-7, 1.0, -1.0, 3.4e38, -3.4e38, 1e30, -1e30]


def _vec(*parts) -> np.ndarray:
    x = np.concatenate([np.asarray(p, dtype=F).ravel() for p in parts])
    return x


def exp_inputs():
    return _vec(SPECIALS, np.linspace(-87, 88, 1 << 20), R.uniform(-100, 100, N),
                np.linspace(-105, -87, 1 << 16), [88.7228, 88.72283, 88.7229, 89, 100, -103.9,
                                                  -104, -200], R.uniform(-1, 1, N))


def erf_inputs():
    tiny = np.geomspace(1e-45, 1.0, 1 << 16)
    return _vec(SPECIALS, tiny, -tiny, np.linspace(-6, 6, 1 << 20), R.uniform(-100, 100, N),
                R.standard_normal(N))


def tanh_inputs():
    tiny = np.geomspace(1e-45, 1.0, 1 << 16)
    return _vec(SPECIALS, tiny, -tiny, np.linspace(-12, 12, 1 << 20), R.uniform(-100, 100, N),
                R.standard_normal(N))


def log_inputs():
    return _vec(SPECIALS, [-5.0, -1e-3], np.geomspace(1e-45, 3.4e38, 1 << 20),
                np.linspace(0.5, 2.0, 1 << 18), R.uniform(0, 100, N), np.abs(R.standard_normal(N)))


def _unary_model(ops_inputs):
    nodes, ins, outs = [], [], []
    for i, (op, x) in enumerate(ops_inputs):
        ins.append(h.make_tensor_value_info(f"x{i}", T.FLOAT, [x.size]))
        outs.append(h.make_tensor_value_info(f"y{i}", T.FLOAT, [x.size]))
        nodes.append(h.make_node(op, [f"x{i}"], [f"y{i}"]))
    g = h.make_graph(nodes, "g", ins, outs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _run(tmp_path, model, feeds, opt_level=3, name="m"):
    so = onnx_mlir_py.compile(model, output=tmp_path / f"{name}.so", opt_level=opt_level)
    return ExecutionSession(so).run(feeds)


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the f32 spacing at ref (finite refs)."""
    sp = np.spacing(np.abs(ref).astype(F)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref) / sp


def _same_specials(got, ref):
    """NaN where the reference is NaN, the same infinities."""
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    inf = np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf].astype(F))


_erf64 = np.frompyfunc(math.erf, 1, 1)


@pytest.fixture(scope="module")
def unary(tmp_path_factory):
    """One -O3 library: y0 = Exp(x0), y1 = Erf(x1), y2 = Tanh(x2), y3 = Log(x3)."""
    xs = [exp_inputs(), erf_inputs(), tanh_inputs(), log_inputs()]
    m = _unary_model(list(zip(["Exp", "Erf", "Tanh", "Log"], xs)))
    with np.errstate(all="ignore"):
        ys = _run(tmp_path_factory.mktemp("o3_math"), m, xs)
    return xs, ys


def test_exp(unary):
    (x, *_), (y, *_) = unary
    with np.errstate(all="ignore"):
        ref = np.exp(x.astype(np.float64))
    _same_specials(y, ref)
    # (a) within 2 ulp over [-87, 88]
    mid = (x >= -87) & (x <= 88)
    u = _ulps(y[mid], ref[mid])
    assert u.max() <= 2.0, f"exp max {u.max():.3f} ulp at x={x[mid][u.argmax()]!r}"
    rel = np.abs(y[mid] - ref[mid]) / ref[mid]
    assert rel.max() <= 3e-7
    # overflow -> inf, underflow -> subnormals then 0 (within one subnormal step)
    assert np.all(np.isinf(y[x > 88.723])) and np.all(y[x < -104] == 0)
    low = (x < -87) & (x >= -110)
    assert np.abs(y[low] - ref[low]).max() <= 2.0 ** -149
    assert np.all(y[x == 0] == 1)


def test_erf(unary):
    (_, x, *_), (_, y, *_) = unary
    ref = _erf64(x.astype(np.float64)).astype(np.float64)
    assert np.array_equal(np.isnan(y), np.isnan(x))
    assert np.array_equal(y[np.isinf(x)], np.sign(x[np.isinf(x)]))
    ok = ~np.isnan(x)
    # relative where the result is a normal f32, else within one subnormal step
    small = ok & (np.abs(x) < 1) & (np.abs(x) >= 2.0 ** -126)
    rel = np.abs(y[small] - ref[small]) / np.abs(ref[small])
    assert rel.max() <= 1e-6, f"erf rel {rel.max():.3e} at x={x[small][rel.argmax()]!r}"
    sub = np.abs(x) < 2.0 ** -126
    assert np.abs(y[sub] - ref[sub]).max() <= 2.0 ** -149
    big = ok & (np.abs(x) >= 1)
    ab = np.abs(y[big] - ref[big])
    assert ab.max() <= 1e-6, f"erf abs {ab.max():.3e} at x={x[big][ab.argmax()]!r}"
    assert np.all(np.abs(y[ok]) <= 1)
    # erf(+-0) = +-0 with the sign
    z = x == 0
    assert np.all(y[z] == 0) and np.array_equal(np.signbit(y[z]), np.signbit(x[z]))


def test_tanh(unary):
    (_, _, x, _), (_, _, y, _) = unary
    ref = np.tanh(x.astype(np.float64))
    assert np.array_equal(np.isnan(y), np.isnan(x))
    ok = ~np.isnan(x) & (np.abs(x) >= 2.0 ** -126)
    rel = np.abs(y[ok] - ref[ok]) / np.abs(ref[ok])
    assert rel.max() <= 1e-6, f"tanh rel {rel.max():.3e} at x={x[ok][rel.argmax()]!r}"
    sub = np.abs(x) < 2.0 ** -126
    assert np.array_equal(y[sub], x[sub])       # tanh(x) = x there
    assert np.all(np.abs(y[~np.isnan(x)]) <= 1)
    assert np.array_equal(y[np.isinf(x)], np.sign(x[np.isinf(x)]))


def test_log(unary):
    (*_, x), (*_, y) = unary
    with np.errstate(all="ignore"):
        ref = np.log(x.astype(np.float64))
    _same_specials(y, ref)
    assert np.all(np.isnan(y[x < 0])) and np.all(y[x == 0] == -np.inf)
    pos = (x > 0) & np.isfinite(x)
    u = _ulps(y[pos], ref[pos])
    assert u.max() <= 2.0, f"log max {u.max():.3f} ulp at x={x[pos][u.argmax()]!r}"


def test_softmax_gelu_logsoftmax(tmp_path):
    """Softmax / LogSoftmax rows (exp in reductions) and GELU written with Erf."""
    rows = R.uniform(-30, 30, (64, 1000)).astype(F)
    rows[0, :5] = [-np.inf, 80, 80, -100, 0]
    short = (R.standard_normal((128, 96)) * 4).astype(F)
    g = R.uniform(-10, 10, (64, 3072)).astype(F)
    nodes = [h.make_node("Softmax", ["a"], ["sa"], axis=-1),
             h.make_node("Softmax", ["b"], ["sb"], axis=-1),
             h.make_node("LogSoftmax", ["b"], ["lb"], axis=-1),
             h.make_node("Div", ["g", "sqrt2"], ["g1"]),
             h.make_node("Erf", ["g1"], ["g2"]),
             h.make_node("Add", ["g2", "one"], ["g3"]),
             h.make_node("Mul", ["g", "g3"], ["g4"]),
             h.make_node("Mul", ["g4", "half"], ["gelu"])]
    inits = [h.make_tensor("sqrt2", T.FLOAT, [], [math.sqrt(2.0)]),
             h.make_tensor("one", T.FLOAT, [], [1.0]), h.make_tensor("half", T.FLOAT, [], [0.5])]
    vi = lambda n, s: h.make_tensor_value_info(n, T.FLOAT, s)  # noqa: E731
    graph = h.make_graph(nodes, "g", [vi("a", rows.shape), vi("b", short.shape), vi("g", g.shape)],
                         [vi("sa", rows.shape), vi("sb", short.shape), vi("lb", short.shape),
                          vi("gelu", g.shape)], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    sa, sb, lb, gelu = _run(tmp_path, m, [rows, short, g])

    def softmax(v):
        v = v.astype(np.float64)
        e = np.exp(v - v.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    for got, v in ((sa, rows), (sb, short)):
        ref = softmax(v)
        err = np.abs(got - ref) / np.maximum(ref, 1e-30)
        big = ref > 1e-30
        # the f32 row sums dominate (libm exp at -O0: 2.8e-6 on `rows` too)
        assert err[big].max() <= 1e-5, err[big].max()
    ref = np.log(softmax(short))
    assert np.abs(lb - ref).max() <= 1e-5 * max(1.0, np.abs(ref).max())
    g64 = g.astype(np.float64)
    ref = 0.5 * g64 * (1 + _erf64(g64 / math.sqrt(2.0)).astype(np.float64))
    assert np.all(np.abs(gelu - ref) <= 1e-6 * (1 + np.abs(ref)))


def test_o0_keeps_libm(tmp_path):
    """Only -O3 approximates: -O0 still calls libm (one call per element)."""
    m = _unary_model([("Exp", np.zeros(16, F)), ("Erf", np.zeros(16, F))])
    ll0 = open(onnx_mlir_py.compile(m, output=tmp_path / "m0.ll", opt_level=0,
                                    emit="EmitLLVMIR")).read()
    ll3 = open(onnx_mlir_py.compile(m, output=tmp_path / "m3.ll", opt_level=3,
                                    emit="EmitLLVMIR")).read()
    assert "@llvm.exp.f32" in ll0 and "@erff" in ll0      # llvm.exp -> expf in llc
    assert "@llvm.exp." not in ll3 and "@erff" not in ll3
