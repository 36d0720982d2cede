"""``--precision bf16`` on edge values, at -O0 (the lowering's generic
contraction) and -O3 (the vdpbf16ps kernels of passes/optimize/matmul_bf16.py
and conv_bf16.py), each against the f32 reference (onnx.reference) and
the fuzzer's per-element bound (testing/fuzz/bf16_bound.py):

* denormal inputs (vdpbf16ps flushes bf16 denormals to zero: within the
  bound's 2^-126 term of the f32 result);
* huge inputs: below bf16's max (3.3895e38) within the bound; above it an
  f32 value rounds to inf in bf16 (IEEE round to nearest even), so the
  output is inf where the f32 model is finite, as the bf16-rounded model
  computes it (a documented property, not an error);
* NaN (every payload, also one only in the low 16 bits that a bare
  truncation would turn into inf) and +-inf propagate as in f32;
* weights and activations round to nearest even at a tie (1 + 2^-8 -> 1,
  1 + 3 * 2^-8 -> 1 + 2^-6): expected bits written out, not computed;
* a target without AVX512-BF16 (older --mcpu) is refused."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import resolve
from onnx_mlir_py.testing.fuzz.bf16_bound import bounds, compare

HOST = resolve(None, None, host_default=True)
needs_bf16 = pytest.mark.skipif(not (HOST.avx512_bf16 or HOST.amx_bf16),
                                reason="the build machine has no AVX512-BF16 / AMX-BF16")
OPTS = pytest.mark.parametrize("opt", [0, 3])
TINY = np.float32(2.0 ** -126)


def _model(node, x_shape, inits, b_shape=None):
    ins = [h.make_tensor_value_info("x", T.FLOAT, x_shape)]
    if b_shape is not None:
        ins.append(h.make_tensor_value_info("b", T.FLOAT, b_shape))
    g = h.make_graph([node], "g", ins, [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(a, n) for n, a in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def matmul(k, n, w=None, const=True):
    """x [M, K] @ w [K, N] (an initializer, or the input ``b``)."""
    if not const:
        return _model(h.make_node("MatMul", ["x", "b"], ["y"]), ["M", k], {}, [k, n])
    w = np.random.default_rng(1).standard_normal((k, n)).astype(np.float32) if w is None else w
    return _model(h.make_node("MatMul", ["x", "w"], ["y"]), ["M", k], {"w": w})


def conv(c, f):
    w = np.random.default_rng(2).standard_normal((f, c, 3, 3)).astype(np.float32)
    return _model(h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]), [1, c, 6, 6],
                  {"w": w})


def _run(model, opt, tmp_path, *feeds):
    so = onnx_mlir_py.compile(model, tmp_path / f"m{opt}.so", opt_level=opt, precision="bf16")
    sess = ExecutionSession(str(so))
    return [sess.run(list(f))[0] for f in feeds]


def _within_bound(model, got, *arrays):
    feeds = dict(zip([i.name for i in model.graph.input], arrays))
    exp = ReferenceEvaluator(model).run(None, feeds)[0]
    e = bounds(model, feeds, {"y": exp})["y"]
    assert compare(got, exp, e) is None, compare(got, exp, e)
    return exp, e


def _shapes(model, m):
    return [[m if isinstance(d, str) else d
             for d in [x.dim_value or x.dim_param for x in i.type.tensor_type.shape.dim]]
            for i in model.graph.input]


@needs_bf16
@OPTS
@pytest.mark.parametrize("case", ["matmul", "matmul_b", "conv"])
def test_denormal_inputs(case, opt, tmp_path):
    model = {"matmul": lambda: matmul(37, 40), "matmul_b": lambda: matmul(37, 40, const=False),
             "conv": lambda: conv(5, 16)}[case]()
    rng = np.random.default_rng(3)
    feeds = []
    for s in _shapes(model, 9):
        a = rng.standard_normal(s).astype(np.float32)
        mask = rng.random(s) < 0.5
        a[mask] = (TINY * rng.uniform(-1, 1, s).astype(np.float32))[mask]   # denormals
        feeds.append(a)
    (got,) = _run(model, opt, tmp_path, feeds)
    exp, e = _within_bound(model, got, *feeds)
    assert np.isfinite(e).all() and np.isfinite(got).all()
    # all-denormal rows: zero, or the f32 result's own denormal size
    tiny_rows = [f.copy() for f in feeds]
    tiny_rows[0][:] = TINY / 4
    (got0,) = _run(model, opt, tmp_path, tiny_rows)
    _within_bound(model, got0, *tiny_rows)
    assert np.abs(got0).max() < 1e-35


@needs_bf16
@OPTS
def test_huge_inputs(opt, tmp_path):
    model = matmul(16, 32, np.full((16, 32), 0.25, np.float32))
    x = np.full((3, 16), 1.0, np.float32)
    x[0, 0] = 3.0e38           # bf16 3.0e38: finite, the sum is finite (0.75e38 + 3.75)
    x[1, 0] = np.float32(3.4e38)       # above bf16's max + half an ulp (3.3961e38): inf
    x[2, :2] = 3.0e38          # 2 * 0.75e38: finite in any order
    (got,) = _run(model, opt, tmp_path, [x])
    exp, e = _within_bound(model, got, x)
    assert np.isfinite(got[0]).all() and np.isfinite(got[2]).all()
    assert np.isfinite(exp[1]).all() and (got[1] == np.inf).all()   # bf16's overflow
    assert np.isinf(e[1]).all()                                      # the bound says so


@needs_bf16
@OPTS
@pytest.mark.parametrize("case", ["matmul", "matmul_b", "conv"])
def test_nan_and_inf_propagate(case, opt, tmp_path):
    model = {"matmul": lambda: matmul(33, 17), "matmul_b": lambda: matmul(33, 17, const=False),
             "conv": lambda: conv(4, 16)}[case]()
    rng = np.random.default_rng(5)
    feeds = [rng.standard_normal(s).astype(np.float32) for s in _shapes(model, 6)]
    flat = feeds[0].reshape(-1).view(np.uint32)
    # quiet and signalling NaNs, one with its payload only in the low 16 bits
    flat[[0, 40, 77]] = [0x7FC00000, 0x7F800001, 0xFF800100]
    feeds[0].reshape(-1)[[100, 130]] = [np.inf, -np.inf]
    (got,) = _run(model, opt, tmp_path, feeds)
    exp, _ = _within_bound(model, got, *feeds)
    assert np.isnan(exp).any() and np.isinf(exp).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exp))
    np.testing.assert_array_equal(np.where(np.isinf(exp), got, 0), np.where(np.isinf(exp), exp, 0))


# f32 value -> its bf16 rounding (nearest, ties to even), written out
TIES = [(1 + 2 ** -8, 1.0),                        # tie, even below
        (1 + 3 * 2 ** -8, 1 + 2 ** -6),            # tie, even above
        (1 + 2 ** -8 + 2 ** -20, 1 + 2 ** -7),     # just above a tie
        (-(1 + 2 ** -8), -1.0),
        (-(1 + 3 * 2 ** -8), -(1 + 2 ** -6)),
        (2 ** -10 * (1 + 2 ** -8), 2 ** -10),      # tie, smaller exponent
        (255.5, 256.0),                            # 8 bits: 255.5 ties to 256 (even)
        (254.5, 254.0)]                            # 254.5: 254 is the even one


@needs_bf16
@OPTS
@pytest.mark.parametrize("const", [True, False])
def test_round_to_nearest_even(const, opt, tmp_path):
    """One-hot rows pick each weight exactly (w: a constant rounded at compile
    time, or an input rounded at run time), and the weights as the one-hot
    rows' partners pick each activation."""
    vals = np.array([v for v, _ in TIES], np.float32)
    want = np.array([r for _, r in TIES], np.float32)
    k, n = len(vals), 16
    w = np.zeros((k, n), np.float32)
    w[:, 3] = vals
    model = matmul(k, n, w, const=const)
    x = np.eye(k, dtype=np.float32)
    feeds = [x] if const else [x, w]
    (got,) = _run(model, opt, tmp_path, feeds)
    np.testing.assert_array_equal(got[:, 3], want)
    # the activations' rounding: x's rows hold the tie values, w is one-hot
    xa = np.zeros((3, k), np.float32)
    xa[0] = vals
    wa = np.zeros((k, n), np.float32)
    wa[np.arange(k), np.arange(k) % n] = 1
    model = matmul(k, n, wa, const=const)
    (got,) = _run(model, opt, tmp_path, [xa] if const else [xa, wa])
    np.testing.assert_array_equal(got[0, :k], want)


@pytest.mark.parametrize("mcpu", ["icelake-server", "znver3", "haswell"])
def test_older_cpu_refused(mcpu, tmp_path):
    with pytest.raises(CompileError, match=r"^--precision bf16 needs AVX512-BF16 or "
                                           r"AMX-BF16; target \S+ has neither$"):
        onnx_mlir_py.compile(matmul(16, 16), tmp_path / "m.so", precision="bf16", mcpu=mcpu)


def test_bound_is_not_vacuous():
    """The bound rejects a result missing one product (a K tail lost), the
    first or the last."""
    model = matmul(64, 8)
    x = np.random.default_rng(7).standard_normal((5, 64)).astype(np.float32)
    w = nh.to_array(model.graph.initializer[0])
    exp = ReferenceEvaluator(model).run(None, {"x": x})[0]
    e = bounds(model, {"x": x}, {"y": exp})["y"]
    assert compare(exp, exp, e) is None
    for k in (0, 63):
        dropped = exp - x[:, k:k + 1] * w[k:k + 1, :]
        assert compare(dropped.astype(np.float32), exp, e) is not None
