"""QuantizeLinear / DequantizeLinear: node tests and per-tensor / per-axis
uint8 / int8 checks against onnx.reference (saturation, half-to-even)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from lowering_util import check
from node_suite import run_case

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
