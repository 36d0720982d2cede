"""Conv's lowering.

Dilated convs: a dilated Conv never reads the input under its kernel's holes: a NaN or
an infinity there leaves the output finite (fuzz s2670-80, s2643-15; those
were onnx.reference's error, the oracle's Conv is fixed in
testing/fuzz/reference_conv.py). Pins the compiler's answer, which does not
depend on the summation order here, at -O0 and -O3.

com.microsoft.NhwcConv (Conv on channels-last X and Y, W in Conv's
layout) against onnx.reference's Conv of the transposed input (onnxruntime's
CPU provider has no NhwcConv kernel), at -O0 and -O3, each model compiled
once and run at two sizes of a dynamic batch dim: 2-D with one group
(linalg.conv_2d_nhwc_fhwc: pads, strides, dilations, bias or not, 1x1, a
filter that is an input), groups, depthwise, 1-D, 3-D, f64 and f16 (Conv's
lowering between transposes), and ``--precision bf16`` within the bf16
bound of the equivalent Transpose . Conv . Transpose model
(testing/fuzz/bf16_bound.py)."""
import math

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from helpers_models import conv_model
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import resolve
from onnx_mlir_py.testing.check import reference, run_compiled
from onnx_mlir_py.testing.fuzz.bf16_bound import bounds, compare
from onnx_mlir_py.verify.values import expose_values

X1 = [[[1.0, np.nan, 2.0, np.inf, 4.0], [3.0, -np.inf, 5.0, np.nan, 1.0]]]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_grouped_dilated_conv_1d_f64(opt_level):
    """s2670-80's form: group 2, dilation 2, pads 1/1, f64 (onnxruntime has no
    f64 Conv). y[o] = w0 x[o - 1] + w1 x[o + 1]; x[o] sits under the hole."""
    x = np.array(X1)
    w = np.array([[[2.0, -1.0]], [[1.0, 1e300]]])
    want = np.array([[[np.nan, 0.0, np.nan, 0.0, np.inf],
                      [-np.inf, 3.0 + 5e300, np.nan, 5.0 + 1e300, np.nan]]])
    m = conv_model([1, 2, 5], [2, 1, 2], T.DOUBLE, dilations=[2], group=2, pads=[1, 1])
    np.testing.assert_array_equal(run_compiled(m, {"x": x, "w": w}, opt_level)[0], want)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", ["grouped_1d", "depthwise_2d"])
def test_dilated_conv_f32_matches_onnxruntime(case, opt_level):
    rng = np.random.default_rng(3)
    if case == "grouped_1d":
        x = np.array(X1, np.float32)
        w = np.array([[[2.0, -1.0]], [[1.0, 3.0]]], np.float32)
        attrs = dict(dilations=[2], group=2, pads=[1, 1])
    else:
        x = rng.standard_normal([1, 3, 7, 7]).astype(np.float32)
        x[0, 0, 3, 3], x[0, 1, 2, 4], x[0, 2, 5, 1] = np.nan, np.inf, -np.inf
        w = rng.standard_normal([3, 1, 3, 3]).astype(np.float32)
        attrs = dict(dilations=[2, 2], group=3, pads=[2, 2, 2, 2])
    m = conv_model(list(x.shape), list(w.shape), T.FLOAT, **attrs)
    want = reference(m, {"x": x, "w": w}, "onnxruntime")[0]
    assert np.isfinite(want).any() and not np.isfinite(want).all()
    np.testing.assert_allclose(run_compiled(m, {"x": x, "w": w}, opt_level)[0], want,
                               rtol=1e-5, atol=1e-5)


# -- com.microsoft.NhwcConv ---------------------------------------------------------
HOST = resolve(None, None, host_default=True)
NP = {T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16}


def _first(r):
    return [0, r - 1] + list(range(1, r - 1))


def _last(r):
    return [0] + list(range(2, r)) + [1]


def _models(x_shape, w_shape, attrs, bias=True, w_input=False, dt=T.FLOAT, seed=0):
    """(the NhwcConv model, its NCHW twin Transpose . Conv . Transpose), x
    channels-last with a dynamic batch dim 'n'; W (and B) initializers,
    or W an input with ``w_input``."""
    rng = np.random.default_rng(seed)
    r = len(x_shape)
    w = rng.standard_normal(w_shape).astype(NP[dt])
    inits = [] if w_input else [nh.from_array(w, "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(w_shape[0]).astype(NP[dt]), "b"))
        ins.append("b")
    inputs = [h.make_tensor_value_info("x", dt, ["n"] + list(x_shape[1:]))]
    if w_input:
        inputs.append(h.make_tensor_value_info("w", dt, list(w_shape)))
    out = [h.make_tensor_value_info("y", dt, None)]

    def mk(nodes, ms):
        ops = [h.make_opsetid("", 17)] + ([h.make_opsetid("com.microsoft", 1)] if ms else [])
        m = h.make_model(h.make_graph(nodes, "g", inputs, out, initializer=inits),
                         opset_imports=ops)
        m.ir_version = 8
        return m
    nhwc = mk([h.make_node("NhwcConv", ins, ["y"], domain="com.microsoft", **attrs)], True)
    twin = mk([h.make_node("Transpose", ["x"], ["xt"], perm=_first(r)),
               h.make_node("Conv", ["xt"] + ins[1:], ["yt"], **attrs),
               h.make_node("Transpose", ["yt"], ["y"], perm=_last(r))], False)
    return nhwc, twin, (w if w_input else None)


def _feeds(x_shape, w, dt, seed):
    rng = np.random.default_rng(100 + seed)
    out = []
    for n in (1, 3):
        f = {"x": rng.standard_normal([n] + list(x_shape[1:])).astype(NP[dt])}
        if w is not None:
            f["w"] = w
        out.append(f)
    return out


CASES = {
    # name: (x [N, spatial.., C], w [M, C/group, k..], attrs, bias, w_input)
    "pads_strides_dilations": ((1, 9, 8, 3), (4, 3, 3, 3),
                               dict(pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2]),
                               True, False),
    "no_bias_same_upper": ((1, 7, 7, 5), (6, 5, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2]),
                           False, False),
    "one_by_one": ((1, 5, 6, 8), (16, 8, 1, 1), {}, True, False),
    "filter_input": ((1, 6, 6, 4), (5, 4, 3, 3), dict(pads=[1, 1, 1, 1]), True, True),
    "grouped": ((1, 8, 8, 4), (6, 2, 3, 3), dict(group=2, pads=[1, 1, 0, 0]), True, False),
    "depthwise": ((1, 8, 8, 4), (4, 1, 3, 3), dict(group=4, pads=[1, 1, 1, 1]), True, False),
    "conv_1d": ((1, 9, 4), (6, 4, 3), dict(pads=[1, 2], strides=[2]), True, False),
    "conv_3d": ((1, 4, 5, 4, 2), (3, 2, 2, 2, 2), dict(pads=[0, 1, 0, 1, 0, 1]), False, False),
}


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nhwc_conv_matches_conv(name, opt, tmp_path):
    xs, ws, attrs, bias, w_input = CASES[name]
    m, twin, w = _models(xs, ws, attrs, bias, w_input)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt))
    ref = ReferenceEvaluator(twin)
    for feeds in _feeds(xs, w, T.FLOAT, 0):
        got = sess.run([feeds[i.name] for i in m.graph.input])[0]
        want = ref.run(None, feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", [T.DOUBLE, T.FLOAT16])
@pytest.mark.parametrize("group", [1, 2])
def test_nhwc_conv_f64_f16(dt, group, tmp_path):
    xs, ws = (1, 6, 5, 4), (6, 4 // group, 3, 3)
    m, twin, _ = _models(xs, ws, dict(group=group, pads=[1, 1, 1, 1]), dt=dt)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    ref = ReferenceEvaluator(twin)
    for feeds in _feeds(xs, None, dt, 1):
        got = sess.run([feeds["x"]])[0]
        want = ref.run(None, feeds)[0]
        assert got.dtype == want.dtype
        tol = 2e-2 if dt == T.FLOAT16 else 1e-12
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol)


@pytest.mark.skipif(not (HOST.avx512_bf16 or HOST.amx_bf16),
                    reason="the build machine has no AVX512-BF16 / AMX-BF16")
@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("name", ["pads_strides_dilations", "one_by_one", "filter_input",
                                  "grouped", "conv_1d"])
def test_nhwc_conv_bf16(name, opt, tmp_path):
    """Within the bf16 bound of the f32 result (per element: the rounding's
    actual effect + K f32 roundings), and not equal to it (the mode is on)."""
    xs, ws, attrs, bias, w_input = CASES[name]
    m, twin, w = _models(xs, ws, attrs, bias, w_input)
    so = onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt, precision="bf16")
    sess = ExecutionSession(str(so))
    exposed, names = expose_values(twin)
    k = int(np.prod(ws[1:]))
    for feeds in _feeds(xs, w, T.FLOAT, 2):
        got = sess.run([feeds[i.name] for i in m.graph.input])[0]
        values = dict(zip(names, ReferenceEvaluator(exposed).run(None, feeds)))
        f32 = values["y"]
        scale = float(np.abs(f32).max())
        err = float(np.abs(got - f32).max()) / scale
        assert 0 < err <= 2.0 ** -8 * math.sqrt(k), err
        e = bounds(twin, feeds, values)["y"]
        assert compare(got, f32, e) is None, compare(got, f32, e)
