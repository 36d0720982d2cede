"""Slice lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import DTYPES, check, random_array

R = np.random.default_rng(2)
N = helper.make_node
BIG = np.iinfo(np.int64).max


def arr(shape, dt):
    return random_array(R, shape, dt)


def i64(*v):
    return np.array(v, np.int64)


SLICES = [  # starts, ends, axes, steps
    ([1], [3], [0], [1]),
    ([0, 1], [BIG, -1], [1, 2], [2, 1]),
    ([-1], [-BIG], [1], [-1]),
    ([4, 3], [0, -10], [-1, 0], [-2, -1]),
    ([10], [20], [2], [1]),          # empty
    ([-3], [BIG], [2], [3]),
]


CASES = [(dt, k) for dt in DTYPES for k in range(len(SLICES))
         if dt != np.bool_ or k in (1, 3)]  # bool goes through the full compiler: 2 cases


@pytest.mark.parametrize("dt,k", CASES)
def test_slice(dt, k):
    s, e, a, st = SLICES[k]
    x = arr((4, 5, 6), dt)
    inits = [("s", i64(*s)), ("e", i64(*e)), ("a", i64(*a)), ("st", i64(*st))]
    check([N("Slice", ["x", "s", "e", "a", "st"], ["y"])], {"x": x}, ["y"], inits=inits)


def test_slice_v1_attributes():
    x = arr((4, 5), np.float32)
    check([N("Slice", ["x"], ["y"], starts=[1, -3], ends=[3, 100], axes=[0, 1])], {"x": x},
          ["y"], opset=9)


@pytest.mark.parametrize("opset", [10, 11])
def test_slice_old_opsets(opset):
    x = arr((6, 5), np.float32)
    inits = [("s", np.array([1], np.int32)), ("e", np.array([5], np.int32))]
    check([N("Slice", ["x", "s", "e"], ["y"])], {"x": x}, ["y"], inits=inits, opset=opset)


@pytest.mark.parametrize("k", [0, 2, 3])
def test_slice_dynamic_dim(k):
    # dim 0 is dynamic; slices on dims 0 and 1 exercise runtime clamping
    s, e, a, st = [([1], [3], [0], [1]), None, ([-1], [-BIG], [0], [-1]),
                   ([-2, 3], [0, -10], [0, 1], [-2, -1])][k]
    x = arr((5, 4, 3), np.float32)
    inits = [("s", i64(*s)), ("e", i64(*e)), ("a", i64(*a)), ("st", i64(*st))]
    check([N("Slice", ["x", "s", "e", "a", "st"], ["y"])], {"x": x}, ["y"], inits=inits,
          dyn_inputs=("x",))
