"""Reduce* with the axes known only at run time (reduction_axes.py): each
model compiled once, compared with onnx.reference at several input shapes
and axes values, -O0 and -O3; bad axes are run-time errors naming the node."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import dynamic_util as dyn

R = np.random.default_rng(12)
N = h.make_node
OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
SHAPES = [(2, 3, 4), (3, 1, 5), (4, 2, 2)]


def opset(op):
    return 13 if op == "ReduceSum" else 18


def feeds(axes_sets, dt=np.float32):
    """positive floats (LogSum), small signed integers"""
    return [{"x": (R.random(s) + 0.5).astype(dt) if dt == np.float32 else
             R.integers(-4, 5, s).astype(dt), "a": np.array(a, np.int64)}
            for s, a in zip(SHAPES, axes_sets)]


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op", OPS)
def test_keepdims_run_time_axes(tmp_path, op, opt_level):
    m = dyn.model([N(op, ["x", "a"], ["y"], keepdims=1, name="red")],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, ["na"])],
                  [("y", T.FLOAT, None)], opset=opset(op))
    dyn.check_shapes(tmp_path, m, feeds([[1], [0, -1], [2, 0, 1]]) +
                     feeds([[], [-2, 2]]), opt_level, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceLogSumExp"])
def test_no_keepdims_static_axes_count(tmp_path, op, opt_level):
    m = dyn.model([N(op, ["x", "a"], ["y"], keepdims=0, name="red")],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, [2])],
                  [("y", T.FLOAT, None)], opset=opset(op))
    dyn.check_shapes(tmp_path, m, feeds([[1, 0], [0, -1], [2, 1]]), opt_level,
                     rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceProd"])
def test_integers(tmp_path, op):
    m = dyn.model([N(op, ["x", "a"], ["y"], keepdims=1, name="red")],
                  [("x", T.INT32, ["n", "m", "k"]), ("a", T.INT64, ["na"])],
                  [("y", T.INT32, None)], opset=opset(op))
    dyn.check_shapes(tmp_path, m, feeds([[1], [0, 2], [-1, 0, 1]], np.int32))


def test_bad_axes_rejected(tmp_path):
    m = dyn.model([N("ReduceSum", ["x", "a"], ["y"], keepdims=1, name="red")],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, ["na"])],
                  [("y", T.FLOAT, None)], opset=13)
    x = np.ones((2, 3, 4), np.float32)
    dyn.check_rejects(tmp_path, m, [{"x": x, "a": np.array([3], np.int64)},
                                    {"x": x, "a": np.array([0, -4], np.int64)}],
                      r"node 'red' \(ReduceSum\).*out of range \[-3, 2\]")
    dyn.check_rejects(tmp_path, m, [{"x": x, "a": np.array([1, -2], np.int64)}],
                      r"node 'red' \(ReduceSum\).*duplicates")


@pytest.mark.parametrize("noop", [0, 1])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceL2", "ReduceLogSumExp"])
def test_axes_input_declared_empty(tmp_path, op, noop):
    # 'axes' is a graph input declared [0] (not a constant): empty, so all axes are
    # reduced, or none with noop_with_empty_axes (was refused: "must be a constant")
    m = dyn.model([N(op, ["x", "a"], ["y"], keepdims=1, noop_with_empty_axes=noop,
                     name="red")],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, [0])],
                  [("y", T.FLOAT, None)], opset=opset(op))
    dyn.check_shapes(tmp_path, m, feeds([[], []]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op", OPS)
def test_noop_with_empty_axes_known_at_run_time(tmp_path, op, opt_level):
    """noop_with_empty_axes=1 and axes of a run-time length (the node tests'
    dynamic mode of test_reduce_sum_empty_axes_input_noop): empty axes at
    run time reduce no dim (only the elementwise steps apply), others reduce;
    was a run-time error "... known only at run time is not supported"."""
    m = dyn.model([N(op, ["x", "a"], ["y"], keepdims=1, noop_with_empty_axes=1, name="red")],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, ["na"])],
                  [("y", T.FLOAT, None)], opset=opset(op))
    dyn.check_shapes(tmp_path, m, feeds([[], [1], [0, -1]]), opt_level, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_no_keepdims_rank_from_the_declared_output(tmp_path, opt_level):
    """ReduceL2's function body with keepdims=0 and axes of a run-time length
    (the node tests' dynamic mode of test_reduce_l2_*_expanded): ReduceSum
    cannot rank its result, the declared output [a, b] after Cast / Sqrt /
    CastLike gives it (shape_inference.rank_from_users; was "result #0 has no
    ranked type"); an axes count that contradicts it is a run-time error."""
    m = dyn.model([N("Mul", ["x", "x"], ["sq"]),
                   N("ReduceSum", ["sq", "a"], ["s"], keepdims=0, name="red"),
                   N("Cast", ["s"], ["c"], to=T.FLOAT), N("Sqrt", ["c"], ["r"]),
                   N("CastLike", ["r", "x"], ["y"])],
                  [("x", T.FLOAT, ["n", "m", "k"]), ("a", T.INT64, ["na"])],
                  [("y", T.FLOAT, ["p", "q"])], opset=18)
    dyn.check_shapes(tmp_path, m, feeds([[1], [-3], [2]]), opt_level, rtol=1e-5, atol=1e-5)
    dyn.check_rejects(tmp_path, m, feeds([[0, 1]]),
                      r"node 'red' \(ReduceSum\): reduces 2 dims, the result rank 2 needs 1",
                      opt_level)
