"""Elementwise breadth (unary.py, elementwise.py): ONNX node tests and
onnx.reference checks for semantics the node tests miss."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from lowering_util import check
from node_suite import run_case

N = helper.make_node
R = np.random.default_rng(3)

NODE_TESTS = [
    "test_sin", "test_cos", "test_tan", "test_asin", "test_acos", "test_atan", "test_sinh",
    "test_cosh", "test_asinh", "test_acosh", "test_atanh", "test_sign", "test_round",
    "test_isnan", "test_isinf_negative", "test_isinf_positive", "test_selu", "test_elu",
    "test_celu", "test_thresholdedrelu", "test_mish", "test_shrink_soft", "test_softsign",
    "test_mod_mixed_sign_int32", "test_mod_mixed_sign_float32", "test_mod_uint8",
    "test_mod_float32_mixed_sign_fmod_0", "test_bitshift_right_int8_negative_input",
    "test_bitshift_left_int32_shift_ge_width", "test_bitshift_right_uint16",
    "test_bitwise_and_ui8_bcast_4v3d", "test_bitwise_xor_i16_3d", "test_bitwise_not_3d",
    "test_tril_neg", "test_triu_one_row", "test_clip_default_int8_inbounds",
    "test_castlike_FLOAT_to_DOUBLE", "test_castlike_FLOAT16_to_FLOAT",
]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


def test_round_half_to_even_and_sign_uint():
    x = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51]], np.float32)
    u = np.array([0, 1, 200], np.uint8)
    check([N("Round", ["x"], ["r"]), N("Sign", ["x"], ["s"]), N("Sign", ["u"], ["su"])],
          {"x": x, "u": u}, ["r", "s", "su"])


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.quick
def test_mod_int_broadcast(fmod):
    a = R.integers(-30, 30, (3, 4)).astype(np.int64)
    b = np.array([7, -3, 5, -4], np.int64)
    check([N("Mod", ["a", "b"], ["y"], fmod=fmod)], {"a": a, "b": b}, ["y"], opset=13)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_mod_float_edge_values_bit_exact(opt_level, dt):
    """Float Mod (fmod=1, C fmod: the sign of the dividend) on every pair of
    0, -0, +-inf, NaN, +-huge, tiny, +-5.5, +-3, the smallest denormal: bit
    for bit (signed zeros, NaN) numpy's fmod, onnx.reference's and
    onnxruntime's, at -O0 and -O3 (s3605-30 suspected it; it was the fuzzer)."""
    import onnxruntime as ort
    from onnx import TensorProto as TP
    from onnx.reference import ReferenceEvaluator
    from onnx_mlir_py.testing.check import run_compiled
    huge = {np.float32: 1e30, np.float64: 1e300, np.float16: 3e4}[dt]
    e = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, huge, -huge, 1e-30, 5.5, -5.5, 3.0, -3.0,
                  np.finfo(dt).smallest_subnormal], np.float64).astype(dt)
    x, y = (a.ravel() for a in np.meshgrid(e, e, indexing="ij"))
    tp = {np.float32: TP.FLOAT, np.float64: TP.DOUBLE, np.float16: TP.FLOAT16}[dt]
    m = helper.make_model(helper.make_graph(
        [N("Mod", ["x", "y"], ["z"], fmod=1)], "g",
        [helper.make_tensor_value_info(n, tp, [x.size]) for n in "xy"],
        [helper.make_tensor_value_info("z", tp, [x.size])]),
        opset_imports=[helper.make_opsetid("", 13)])
    feeds = {"x": x, "y": y}
    got = run_compiled(m, feeds, opt_level)[0]
    with np.errstate(all="ignore"):
        want = np.fmod(x, y)
    oracles = {"numpy": want, "onnx.reference": ReferenceEvaluator(m).run(None, feeds)[0],
               "onnxruntime": ort.InferenceSession(m.SerializeToString(), providers=[
                   "CPUExecutionProvider"]).run(None, feeds)[0]}
    for name, exp in oracles.items():
        bad = ~((np.isnan(got) & np.isnan(exp)) |
                ((got == exp) & (np.signbit(got) == np.signbit(exp))))
        assert not bad.any(), (name, [(x[i], y[i], got[i], exp[i]) for i in np.flatnonzero(bad)])


def test_clip_v6_attributes_and_elu_selu_v6():
    x = R.standard_normal((3, 5)).astype(np.float32) * 3
    check([N("Clip", ["x"], ["c"], min=-1.0, max=0.5), N("Elu", ["x"], ["e"], alpha=0.7),
           N("Selu", ["x"], ["s"])], {"x": x}, ["c", "e", "s"], opset=6, rtol=1e-5)


def test_shrink_int_and_isinf_attrs():
    x = np.array([-5, -2, 0, 1, 3, 9], np.int32)
    f = np.array([np.inf, -np.inf, 1.0, np.nan], np.float32)
    check([N("Shrink", ["x"], ["s"], lambd=1.5, bias=1.0),
           N("IsInf", ["f"], ["p"], detect_negative=0), N("IsInf", ["f"], ["q"], detect_positive=0)],
          {"x": x, "f": f}, ["s", "p", "q"], opset=20)


def test_trilu_batched_dynamic_k_and_bool():
    x = R.standard_normal((2, 4, 5)).astype(np.float32)
    bm = R.integers(0, 2, (3, 3)).astype(np.bool_)
    check([N("Trilu", ["x", "k"], ["u"]), N("Trilu", ["x", "k"], ["l"], upper=0),
           N("Trilu", ["bm"], ["bu"])], {"x": x, "k": np.array(-1, np.int64), "bm": bm},
          ["u", "l", "bu"], opset=14)


def test_bitshift_uint8_and_bitwise_broadcast():
    a = np.array([[1, 128, 255, 7]], np.uint8)
    s = np.array([1, 1, 7, 9], np.uint8)
    check([N("BitShift", ["a", "s"], ["l"], direction="LEFT"),
           N("BitShift", ["a", "s"], ["r"], direction="RIGHT"),
           N("BitwiseOr", ["a", "s"], ["o"])], {"a": a, "s": s}, ["l", "r", "o"], opset=18)


def test_unsigned_compare_and_int_abs_neg_pow():
    a = np.array([250, 3, 128], np.uint8)
    b = np.array([5, 200, 127], np.uint8)
    i = np.array([-7, 0, 5], np.int32)
    e = np.array([2, 3, 0], np.int32)
    check([N("Greater", ["a", "b"], ["g"]), N("Less", ["a", "b"], ["l"]),
           N("Abs", ["i"], ["ab"]), N("Neg", ["i"], ["ng"]), N("Pow", ["i", "e"], ["p"]),
           N("Div", ["e", "e1"], ["d"])],
          {"a": a, "b": b, "i": i, "e": e, "e1": np.array([2, 3, 2], np.int32)},
          ["g", "l", "ab", "ng", "p", "d"], opset=15)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_softplus_large_small_inf_nan(dt):
    """Softplus was lowered as log1p(exp(x)): inf from x ~ 89 (f32) on, where
    the answer is x; and math.log1p becomes log(1 + t) in LLVM, 0 for
    Softplus(-20). Now max(x, 0) + log1p(exp(-|x|)) with an accurate log1p;
    Mish uses it too. f32 vs onnxruntime; f64 (onnxruntime has no f64
    Softplus and onnx.reference overflows too) vs numpy's logaddexp(0, x)."""
    from lowering_util import make_model
    from onnx_mlir_py.testing.check import check_compiled, run_compiled
    x = np.array([[-np.inf, -1e30, -100, -20, -1e-8, 0, 1e-8, 1, 20, 88.8, 89, 100, 1e4,
                   1e30, np.inf, np.nan]], dt)
    feeds = {"x": x}
    m = make_model([N("Softplus", ["x"], ["y"])], feeds, ["y"], opset=22)
    if dt == np.float32:
        (y,) = check_compiled(m, feeds, engine="onnxruntime", rtol=1e-6, atol=0)
    else:
        (y,) = run_compiled(m, feeds, 0)
        np.testing.assert_allclose(y, np.logaddexp(0, x), rtol=1e-14, atol=0)
    assert y[0, 11] == 100 and y[0, 13] == dt(1e30) and y[0, 3] > 0
    # Mish from -20 on (onnxruntime flushes Mish(-100) to 0 and gives 0, not
    # the formula's NaN, for -inf)
    feeds = {"x": x[:, 3:]}
    m = make_model([N("Mish", ["x"], ["z"])], feeds, ["z"], opset=22)
    if dt == np.float32:
        (z,) = check_compiled(m, feeds, engine="onnxruntime", rtol=1e-6, atol=0)
    else:
        (z,) = run_compiled(m, feeds, 0)
        np.testing.assert_allclose(z, x[:, 3:] * np.tanh(np.logaddexp(0, x[:, 3:])),
                                   rtol=1e-14, atol=0)
    assert z[0, 8] == 100
