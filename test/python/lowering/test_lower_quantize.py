"""QuantizeLinear / DequantizeLinear: node tests and per-tensor / per-axis
uint8 / int8 checks against onnx.reference (saturation, half-to-even); then
int4/uint4/int2/uint2, float8 and float4 E2M1: per tensor, per axis and
blocked (opset 21+), zero points, ``saturate``, bf16 scales; bit-exact with
onnx.reference, at two run-time shapes when a dim is dynamic."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from lowering_util import check
from node_suite import run_case
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import run_compiled
from test_lower_cast import assert_same_bits

N = helper.make_node

NODE_TESTS = ["test_quantizelinear", "test_quantizelinear_axis", "test_quantizelinear_int16",
              "test_quantizelinear_blocked_asymmetric", "test_dequantizelinear",
              "test_dequantizelinear_axis", "test_dequantizelinear_blocked",
              "test_dequantizelinear_uint16"]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


@pytest.mark.parametrize("zp_dtype", [np.uint8, np.int8])
def test_per_tensor_saturating_round_half_even(zp_dtype):
    x = np.array([[-300.0, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 300.0]], np.float32)
    zp = np.array(3 if zp_dtype == np.uint8 else -3, zp_dtype)
    inits = [("s", np.array(1.0, np.float32)), ("zp", zp)]
    check([N("QuantizeLinear", ["x", "s", "zp"], ["q"]),
           N("DequantizeLinear", ["q", "s", "zp"], ["d"])], {"x": x}, ["q", "d"], inits=inits,
          opset=19)


@pytest.mark.parametrize("axis", [1, -1])
def test_per_axis(axis):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 4)) * 50).astype(np.float32)
    n = x.shape[axis]
    inits = [("s", (rng.random(n) + 0.2).astype(np.float32)),
             ("zp", rng.integers(-5, 5, n).astype(np.int8))]
    check([N("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=axis),
           N("DequantizeLinear", ["q", "s", "zp"], ["d"], axis=axis)], {"x": x}, ["q", "d"],
          inits=inits, opset=19, rtol=1e-6)


def test_no_zero_point_defaults_to_uint8():
    x = np.array([0.2, 7.7, 300.0, -1.0], np.float32)
    check([N("QuantizeLinear", ["x", "s"], ["q"])], {"x": x}, ["q"],
          inits=[("s", np.array(0.5, np.float32))], opset=19)


# -- low-precision types ------------------------------------------------------------
TYPES = [TP.INT4, TP.UINT4, TP.INT2, TP.UINT2, TP.FLOAT8E4M3FN, TP.FLOAT8E5M2FNUZ,
         TP.FLOAT4E2M1]
RANGE = {TP.INT4: (-8, 8), TP.UINT4: (0, 16), TP.INT2: (-2, 2), TP.UINT2: (0, 4)}


def _params(t: int, shape, rng):
    """(scale, zero point or None) of ``shape``."""
    scale = (rng.random(shape) * 0.5 + 0.05).astype(np.float32)
    np_t = helper.tensor_dtype_to_np_dtype(t)
    if t in RANGE:
        zp = rng.integers(*RANGE[t], shape).astype(np_t)
    elif t == TP.FLOAT4E2M1:
        zp = rng.choice([0.0, 0.5, -1.0, 2.0], shape).astype(np_t)
    else:
        zp = np.zeros(shape, np_t)           # float8: must be 0
    return scale, zp


def _model(t: int, x_shape, p_shape, axis=1, block_size=0, saturate=1, dyn=False):
    rng = np.random.default_rng(t)
    scale, zp = _params(t, p_shape, rng)
    attrs = {"axis": axis, "saturate": saturate}
    if block_size:
        attrs["block_size"] = block_size
    q = helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], **attrs)
    dq = helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["d"], axis=axis,
                          **({"block_size": block_size} if block_size else {}))
    dims = ["n"] + list(x_shape[1:]) if dyn else list(x_shape)
    g = helper.make_graph(
        [q, dq], "g", [helper.make_tensor_value_info("x", TP.FLOAT, dims)],
        [helper.make_tensor_value_info("q", t, dims), helper.make_tensor_value_info("d", TP.FLOAT, dims)],
        [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "zp")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])


def _x(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.flat[:4] = [1e4, -1e4, 0.25, -0.0]        # saturation and ties
    return x


def _check(m, x):
    got = run_compiled(m, {"x": x})
    want = ReferenceEvaluator(m).run(None, {"x": x})
    for name, g, w in zip("qd", got, want):
        assert_same_bits(g, np.asarray(w), name)


@pytest.mark.parametrize("t", TYPES)
def test_per_tensor(t):
    _check(_model(t, (3, 8), ()), _x((3, 8)))


@pytest.mark.parametrize("t", TYPES)
def test_per_axis(t):
    _check(_model(t, (3, 8, 2), (8,), axis=1), _x((3, 8, 2)))


@pytest.mark.parametrize("t", TYPES)
def test_blocked(t):
    # axis 1 of 10 in blocks of 4: 3 blocks, the last one short
    _check(_model(t, (3, 10), (3, 3), axis=1, block_size=4), _x((3, 10)))


@pytest.mark.parametrize("t", [TP.FLOAT8E4M3FN, TP.FLOAT8E5M2FNUZ])
def test_float8_no_saturate(t):
    _check(_model(t, (3, 8), (), saturate=0), _x((3, 8)))


@pytest.mark.parametrize("t", [TP.INT4, TP.FLOAT8E4M3FN])
def test_blocked_dynamic_batch(t):
    """Blocked along axis 0 with a dynamic dim 0: one library, two shapes."""
    m = _model(t, (10, 4), (3, 4), axis=0, block_size=4, dyn=True)
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        sess = ExecutionSession(so)
        for n in (10, 9):          # ceil(n / 4) == 3 blocks either way
            x = _x((n, 4), seed=n)
            want = ReferenceEvaluator(m).run(None, {"x": x})
            for name, g, w in zip("qd", sess.run([x]), want):
                assert_same_bits(g, np.asarray(w), f"{name} at n={n}")


def test_dequantize_bf16_scale():
    """A bf16 scale: y is bf16, rounded once from the f32 product."""
    import ml_dtypes
    x = np.arange(-8, 8, dtype=np.int8).astype(ml_dtypes.int4)
    s = np.array([0.3, 1.7], np.float32).astype(ml_dtypes.bfloat16)
    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=0)], "g",
        [helper.make_tensor_value_info("x", TP.INT4, [2, 8])],
        [helper.make_tensor_value_info("y", TP.BFLOAT16, [2, 8])],
        [numpy_helper.from_array(s, "s")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    xx = x.reshape(2, 8)
    assert_same_bits(run_compiled(m, {"x": xx})[0],
                     np.asarray(ReferenceEvaluator(m).run(None, {"x": xx})[0]), "y")
