"""Dropout (inference) lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check

R = np.random.default_rng(5)
N = helper.make_node


@pytest.mark.parametrize("opset", [10, 12, 13, 22])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_dropout_inference_with_mask(opset, dt):
    x = R.standard_normal((3, 4)).astype(dt)
    nodes = [N("Dropout", ["x"], ["y", "mask"]), N("Identity", ["mask"], ["m"])]
    check(nodes, {"x": x}, ["y", "m"], opset=opset, compiled=True)


def test_dropout_opset7():
    # (v7's mask has the input type; the reference returns a bool mask, so only y)
    x = R.standard_normal((3, 4)).astype(np.float32)
    check([N("Dropout", ["x"], ["y"], ratio=0.2), N("Relu", ["y"], ["z"])], {"x": x}, ["z"],
          opset=7)


def test_dropout_training_mode_false_constant():
    x = R.standard_normal((3, 4)).astype(np.float32)
    inits = [("r", np.array(0.3, np.float32)), ("t", np.array(False))]
    check([N("Dropout", ["x", "r", "t"], ["y"])], {"x": x}, ["y"], inits=inits, opset=13)
