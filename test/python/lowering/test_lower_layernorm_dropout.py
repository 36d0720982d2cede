"""LayerNormalization and Dropout (inference) lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check

R = np.random.default_rng(5)
N = helper.make_node


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [-1, 1, 0])
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm(dt, axis, with_bias):
    x = R.standard_normal((2, 3, 8)).astype(dt) * 3 + 1
    norm_shape = x.shape[axis if axis >= 0 else 3 + axis:]
    inits = [("s", R.standard_normal(norm_shape).astype(dt))]
    ins = ["x", "s"]
    if with_bias:
        inits.append(("b", R.standard_normal(norm_shape).astype(dt)))
        ins.append("b")
    check([N("LayerNormalization", ins, ["y"], axis=axis, epsilon=1e-3)], {"x": x}, ["y"],
          inits=inits, rtol=1e-4, atol=1e-5)


def test_layer_norm_mean_invstd_outputs():
    x = R.standard_normal((4, 5, 6)).astype(np.float32)
    inits = [("s", R.standard_normal((5, 6)).astype(np.float32)),
             ("b", R.standard_normal((6,)).astype(np.float32))]
    check([N("LayerNormalization", ["x", "s", "b"], ["y", "m", "i"], axis=1)], {"x": x},
          ["y", "m", "i"], inits=inits, rtol=1e-4, atol=1e-5)


def test_layer_norm_dynamic_batch():
    x = R.standard_normal((3, 7, 16)).astype(np.float32)
    inits = [("s", R.standard_normal((16,)).astype(np.float32)),
             ("b", R.standard_normal((16,)).astype(np.float32))]
    check([N("LayerNormalization", ["x", "s", "b"], ["y", "m"], axis=-1)], {"x": x},
          ["y", "m"], inits=inits, dyn_inputs=("x",), rtol=1e-4, atol=1e-5)


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
