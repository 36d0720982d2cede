"""Slice with starts/ends/axes/steps known only at run time: compiled once,
compared with onnxruntime (which follows the spec's clamping, see
slice_axis) at several shapes and values."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model

N = h.make_node
R = np.random.default_rng(3)
BIG, SMALL = np.iinfo(np.int64).max, np.iinfo(np.int64).min
Y = [("y", T.FLOAT, None)]
ORT = "onnxruntime"


def i64(*v):
    return np.array(v, np.int64)


def x_of(*shape):
    return R.random(shape, dtype=np.float32)


def _slice_model(x_dims, n):
    """Slice(x, s, e, a, st), the four of length n (str: a run-time length,
    a different dim_param for each, so that Slice checks they agree)."""
    return model([N("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")],
                 [("x", T.FLOAT, x_dims)] +
                 [(k, T.INT64, [n + k if isinstance(n, str) else n])
                  for k in ("s", "e", "a", "st")], Y, opset=18)


def _feeds(x, s, e, a, st):
    return {"x": x, "s": s, "e": e, "a": a, "st": st}


@pytest.mark.parametrize("opt_level", [0, 3])
def test_slice_to_shape_minus_one(tmp_path, opt_level):
    """y = x[:, 0 : dim1 - 1]: ends computed from Shape (real exports)."""
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "one"], ["d1"]),
             N("Sub", ["d1", "one"], ["e"]),
             N("Slice", ["x", "zero", "e", "one"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n", "m"])], Y, opset=18,
              inits=[h.make_tensor("zero", T.INT64, [1], [0]),
                     h.make_tensor("one", T.INT64, [1], [1])])
    check_shapes(tmp_path, m, [{"x": x_of(*s)} for s in [(2, 5), (3, 1), (1, 9)]],
                 opt_level, engine=ORT)


SETS = [  # starts, ends, axes, steps: every value known only at run time
    (i64(1, 0), i64(3, BIG), i64(0, 1), i64(1, 2)),
    (i64(-1, 4), i64(SMALL, 0), i64(0, -1), i64(-1, -2)),
    (i64(10, -3), i64(20, BIG), i64(1, 0), i64(1, 3)),       # empty on dim 1
    (i64(-100, 2), i64(100, -100), i64(1, 0), i64(-3, -1)),  # start < -dim, step < 0
    (i64(0, 3), i64(BIG, 0), i64(0, 1), i64(BIG, SMALL + 1)),
]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_slice_all_inputs_at_run_time(tmp_path, opt_level):
    feeds = [_feeds(x_of(*shape), *p) for shape in [(4, 5), (1, 7), (6, 2)] for p in SETS]
    check_shapes(tmp_path, _slice_model(["n", "m"], 2), feeds, opt_level, engine=ORT)


def test_slice_int64_min_step(tmp_path):
    """step INT64_MIN (onnxruntime negates it and overflows; starts >= -dim,
    where onnx.reference (numpy) agrees with the spec)."""
    x = x_of(5)
    check_shapes(tmp_path, _slice_model(["n"], 1),
                 [_feeds(x, i64(s), i64(e), i64(0), i64(SMALL))
                  for s, e in [(3, 0), (0, BIG), (BIG, SMALL), (4, -6)]])


def test_slice_entries_counted_at_run_time(tmp_path):
    """axes/starts/... of a run-time length (an scf.for picks each dim's entry)."""
    m = _slice_model(["n", "m", 3], "k")
    x = x_of(5, 4, 3)
    check_shapes(tmp_path, m, [_feeds(x, i64(1), i64(-1), i64(-2), i64(2)),
                               _feeds(x, i64(-1, 0, 1), i64(SMALL, 2, 3), i64(0, 2, 1),
                                      i64(-2, 1, 1)),
                               _feeds(x_of(2, 6, 3), i64(), i64(), i64(), i64())],
                 engine=ORT)
    check_rejects(tmp_path, m, [_feeds(x, i64(0, 1), i64(2, 3), i64(0, -3), i64(1, 1))],
                  r"node 'sl' \(Slice\).*dim 0 2 times")
    check_rejects(tmp_path, m, [_feeds(x, i64(0), i64(2), i64(3), i64(1))],
                  r"node 'sl' \(Slice\).*out of range")
    check_rejects(tmp_path, m, [_feeds(x, i64(0, 1), i64(2), i64(0), i64(1))],
                  r"node 'sl' \(Slice\).*entries")


def test_slice_zero_step_at_run_time_is_an_error(tmp_path):
    m = _slice_model(["n"], 1)
    check_shapes(tmp_path, m, [_feeds(x_of(6), i64(1), i64(5), i64(0), i64(2))], engine=ORT)
    check_rejects(tmp_path, m, [_feeds(x_of(6), i64(1), i64(5), i64(0), i64(0))],
                  r"node 'sl' \(Slice\).*steps must not be 0")
