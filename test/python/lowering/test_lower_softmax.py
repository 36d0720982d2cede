"""LogSoftmax / Hardmax (v13 via node tests, v1/v11 2-D coercion vs numpy)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from engine import run_model
from lowering_util import check, make_model
from node_suite import run_case

N = helper.make_node
R = np.random.default_rng(1)

NODE_TESTS = ["test_logsoftmax_axis_0", "test_logsoftmax_large_number",
              "test_logsoftmax_negative_axis", "test_hardmax_axis_1", "test_hardmax_one_hot",
              "test_hardmax_negative_axis"]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


def test_log_softmax_and_hardmax_v13_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]], np.float32)
    check([N("Hardmax", ["x"], ["h"], axis=0), N("Hardmax", ["x"], ["h1"]),
           N("LogSoftmax", ["x"], ["l"], axis=0)], {"x": x}, ["h", "h1", "l"], opset=13)


def _coerced(x, axis, fn):
    x2 = x.reshape(int(np.prod(x.shape[:axis])), -1)
    return fn(x2).reshape(x.shape)


def _log_softmax(x2):
    m = x2.max(axis=1, keepdims=True)
    return x2 - m - np.log(np.exp(x2 - m).sum(axis=1, keepdims=True))


def _hardmax(x2):
    y = np.zeros_like(x2)
    y[np.arange(x2.shape[0]), x2.argmax(axis=1)] = 1
    return y


@pytest.mark.parametrize("opset", [1, 11])
@pytest.mark.parametrize("op,fn", [("LogSoftmax", _log_softmax), ("Hardmax", _hardmax)])
def test_v11_coerces_to_2d(opset, op, fn):
    # onnx.reference applies the v13 semantics to every opset: compare with
    # the v1/v11 definition directly
    x = R.standard_normal((2, 3, 4)).astype(np.float32)
    x[1, 2, 3] = x[1].max() + 1  # the maximum over the coerced row is off axis 1
    m = make_model([N(op, ["x"], ["y"], axis=1)], {"x": x}, ["y"], opset=opset)
    expected = _coerced(x, 1, fn).astype(np.float32)
    got = run_model(m, {"x": x}, [expected])[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dt,et", [(np.float32, 1), (np.float64, 11)])
def test_hardmax_nan_first_is_max(tmp_path, dt, et):
    """Found by the fuzzer (s1-32): a row with a NaN gave all zeros; the first
    NaN is the max (onnx.reference, numpy's argmax; onnxruntime's TopK also
    ranks NaN first; its f32 Hardmax depends on Eigen's vectorised max, it
    has no f64 kernel). 2 run-time shapes."""
    from dynamic_util import check_shapes, model
    m = model([N("Hardmax", ["x"], ["y"], axis=-1), N("Hardmax", ["x"], ["y0"], axis=0)],
              [("x", et, ["n", 5])], [("y", et, None), ("y0", et, None)], opset=13)
    nan, inf = np.nan, np.inf
    x = np.array([[1, nan, 3, nan, 0], [nan, 1, inf, 2, 0], [-inf, 1, 1, 0, 0],
                  [inf, 2, inf, nan, nan]], dt)
    check_shapes(tmp_path, m, [{"x": x}, {"x": x[1:]}])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_f16_softmax_rounds_once(tmp_path, opt_level):
    """Fuzzer case s2000-1417: f16 LogSoftmax summed and took the log in f16
    (-0.0842 for -0.0850, 13 ulp), which Mod(x, LogSoftmax(x), fmod) turned
    into 0.0012 for 0.0648. Softmax / LogSoftmax of f16 compute in f32 and
    round once, as onnxruntime does. 2 run-time shapes, vs onnxruntime."""
    from dynamic_util import check_shapes, model
    m = model([N("LogSoftmax", ["x"], ["l"], axis=0), N("Mod", ["x", "l"], ["y"], fmod=1),
               N("Softmax", ["x"], ["s"], axis=0)],
              [("x", 10, ["n", 1])], [("l", 10, None), ("y", 10, None), ("s", 10, None)])
    x = np.array([[-0.84228515625], [2.275390625], [-1.3515625], [-1.7470703125]], np.float16)
    x2 = np.concatenate([x, (R.standard_normal((3, 1)) * 3).astype(np.float16)])
    check_shapes(tmp_path, m, [{"x": x}, {"x": x2}], opt_level, rtol=1e-3, atol=1e-3,
                 engine="onnxruntime")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_f16_softmax_rounds_like_numpy(tmp_path, opt_level):
    """f16 Softmax rounded once from f32, one ulp off onnx.reference in some
    probabilities, which attention's P @ V made 2 wrong numbers
    (test_attention_4d_causal_fp16). It now rounds x - max, each exp and the
    row sum to f16 as numpy does: equal to onnx.reference, 2 run-time shapes
    (rows with -inf, as a causal mask writes them)."""
    from dynamic_util import check_shapes, model
    m = model([N("Softmax", ["x"], ["s"], axis=-1)], [("x", 10, ["n", 24])],
              [("s", 10, None)], opset=13)
    rng = np.random.default_rng(11)
    sets = []
    for n in (16, 37):
        x = (rng.standard_normal((n, 24)) * 2).astype(np.float16)
        x[np.triu_indices(n, 1, 24)] = -np.inf
        sets.append({"x": x})
    check_shapes(tmp_path, m, sets, opt_level, rtol=0, atol=1e-7)
