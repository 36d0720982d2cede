"""Concat / Split lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import DTYPES, check, random_array

R = np.random.default_rng(1)
N = helper.make_node



def arr(shape, dt):
    return random_array(R, shape, dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(dt, axis):
    shapes = {0: [(2, 3, 4), (1, 3, 4), (3, 3, 4)], 1: [(2, 1, 4), (2, 3, 4), (2, 2, 4)],
              -1: [(2, 3, 4), (2, 3, 1), (2, 3, 2)]}[axis]
    feeds = {f"x{i}": arr(s, dt) for i, s in enumerate(shapes)}
    check([N("Concat", list(feeds), ["y"], axis=axis)], feeds, ["y"])


@pytest.mark.parametrize("opset", [4, 11])
def test_concat_old(opset):
    feeds = {"a": arr((2, 3), np.float32), "b": arr((2, 2), np.float32)}
    check([N("Concat", ["a", "b"], ["y"], axis=1)], feeds, ["y"], opset=opset)


def test_concat_dynamic_batch():
    feeds = {"a": arr((3, 2), np.float32), "b": arr((3, 5), np.float32)}
    check([N("Concat", ["a", "b"], ["y"], axis=1)], feeds, ["y"], dyn_inputs=("a", "b"))


def test_concat_along_dynamic_axis():
    feeds = {"a": arr((3, 2), np.int64), "b": arr((4, 2), np.int64)}
    check([N("Concat", ["a", "b"], ["y"], axis=0)], feeds, ["y"], dyn_inputs=("a", "b"))


@pytest.mark.parametrize("dt", DTYPES)
def test_split_equal(dt):
    x = arr((6, 4), dt)
    check([N("Split", ["x"], ["a", "b", "c"], axis=0)], {"x": x}, ["a", "b", "c"])


@pytest.mark.parametrize("opset", [2, 11])
def test_split_attr(opset):
    x = arr((2, 7), np.float32)
    check([N("Split", ["x"], ["a", "b"], axis=-1, split=[3, 4])], {"x": x}, ["a", "b"],
          opset=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_split_input(opset):
    x = arr((2, 9, 3), np.float32)
    inits = [("s", np.array([2, 0, 7], np.int64))]
    check([N("Split", ["x", "s"], ["a", "b", "c"], axis=1)], {"x": x}, ["a", "b", "c"],
          inits=inits, opset=opset)


@pytest.mark.parametrize("dim", [7, 8])
def test_split_num_outputs(dim):
    x = arr((dim, 3), np.int32)
    check([N("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)], {"x": x},
          ["a", "b", "c"], opset=18)


def test_split_dynamic_batch():
    x = arr((5, 6), np.float32)
    check([N("Split", ["x"], ["a", "b"], axis=1)], {"x": x}, ["a", "b"], dyn_inputs=("x",))
