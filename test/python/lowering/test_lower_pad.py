"""Pad lowering vs onnx.reference (modes, versions, dtypes, negative pads)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check, random_array
from lowering_util import make_model
from onnx_mlir_py.testing.check import check_compiled

R = np.random.default_rng(6)
N = helper.make_node


def arr(shape, dt):
    return random_array(R, shape, dt)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
def test_pad_modes(mode, dt):
    x = arr((3, 4, 5), dt)
    pads = np.array([0, 2, 1, 1, 0, 3], np.int64)
    inits = [("p", pads)]
    ins = ["x", "p"]
    if mode == "constant":
        inits.append(("v", np.array(7, dt)))
        ins.append("v")
    check([N("Pad", ins, ["y"], mode=mode)], {"x": x}, ["y"], inits=inits)


def test_pad_bool_constant():
    x = arr((3, 4), np.bool_)
    check([N("Pad", ["x", "p"], ["y"])], {"x": x}, ["y"],
          inits=[("p", np.array([1, 0, 0, 2], np.int64))])


def test_pad_wrap_opset19():
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": x}, ["y"], opset=19,
          inits=[("p", np.array([2, 1, 1, 3], np.int64))])


def test_pad_axes_opset18():
    x = arr((2, 3, 4), np.float32)
    check([N("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], {"x": x}, ["y"], opset=18,
          inits=[("p", np.array([1, 2, 2, 1], np.int64)), ("a", np.array([-1, 1], np.int64))])


def test_pad_negative_crops():
    # onnx.reference (np.pad) rejects negative pads: compare with onnxruntime
    x = arr((5, 6), np.float32)
    m = make_model([N("Pad", ["x", "p"], ["y"], mode="constant")], {"x": x}, ["y"],
                   inits=[("p", np.array([-1, 2, 1, -2], np.int64))])
    got = check_compiled(m, {"x": x}, engine="onnxruntime")
    assert got[0].shape == (5, 6)


def test_pad_opset2_attribute():
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x"], ["y"], mode="constant", pads=[1, 0, 0, 2], value=1.5)], {"x": x},
          ["y"], opset=2)


@pytest.mark.parametrize("opset", [11, 13, 21])
def test_pad_versions_runtime_value(opset):
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x", "p", "v"], ["y"])], {"x": x, "v": np.array(-2.0, np.float32)},
          ["y"], opset=opset, inits=[("p", np.array([1, 1, 2, 0], np.int64))])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_dynamic_batch(mode):
    x = arr((4, 5, 6), np.float32)
    check([N("Pad", ["x", "p"], ["y"], mode=mode)], {"x": x}, ["y"], dyn_inputs=("x",),
          inits=[("p", np.array([0, 0, 2, 0, 0, 3], np.int64))])
