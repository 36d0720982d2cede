"""Slice with starts/ends/axes/steps known only at run time: compiled once,
compared with onnxruntime at several shapes and values."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dyn_check import check_feeds, compile_once, model
from onnx_mlir_py.runtime import RuntimeInputError

N = h.make_node
R = np.random.default_rng(3)
BIG, SMALL = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def i64(*v):
    return np.array(v, np.int64)


def x_of(*shape):
    return R.random(shape, dtype=np.float32)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_slice_to_shape_minus_one(tmp_path, opt_level):
    """y = x[:, 0 : dim1 - 1]: ends computed from Shape (real exports)."""
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "one"], ["d1"]),
             N("Sub", ["d1", "one"], ["e"]),
             N("Slice", ["x", "zero", "e", "one"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n", "m"])], ["y"],
              inits=[("zero", i64(0)), ("one", i64(1))])
    sess = compile_once(m, tmp_path, opt_level)
    check_feeds(m, sess, [[x_of(2, 5)], [x_of(3, 1)], [x_of(1, 9)]])


SETS = [  # starts, ends, axes, steps: every value known only at run time
    (i64(1, 0), i64(3, BIG), i64(0, 1), i64(1, 2)),
    (i64(-1, 4), i64(SMALL, 0), i64(0, -1), i64(-1, -2)),
    (i64(10, -3), i64(20, BIG), i64(1, 0), i64(1, 3)),       # empty on dim 1
    (i64(-100, 2), i64(100, -100), i64(1, 0), i64(-3, -1)),  # start < -dim, step < 0
    (i64(0, 3), i64(BIG, 0), i64(0, 1), i64(BIG, SMALL + 1)),
]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_slice_all_inputs_at_run_time(tmp_path, opt_level):
    nodes = [N("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n", "m"])] +
              [(k, T.INT64, [2]) for k in ("s", "e", "a", "st")], ["y"])
    sess = compile_once(m, tmp_path, opt_level)
    feeds = [[x_of(*shape)] + list(p) for shape in [(4, 5), (1, 7), (6, 2)] for p in SETS]
    check_feeds(m, sess, feeds)


def test_slice_int64_min_step(tmp_path):
    """step INT64_MIN (onnxruntime negates it and overflows: compare with numpy)."""
    nodes = [N("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n"])] + [(k, T.INT64, [1]) for k in "s e a st".split()],
              ["y"])
    sess = compile_once(m, tmp_path)
    x = x_of(5)
    for s, e in [(3, 0), (0, BIG), (BIG, SMALL), (4, -6)]:
        got = sess.run([x, i64(s), i64(e), i64(0), i64(SMALL)])[0]
        np.testing.assert_array_equal(got, x[s:e:SMALL])  # start >= -dim: numpy = ONNX


def test_slice_entries_counted_at_run_time(tmp_path):
    """axes/starts/... of a run-time length (an scf.for picks each dim's entry)."""
    nodes = [N("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n", "m", 3])] +
              [(k, T.INT64, ["k"]) for k in ("s", "e", "a", "st")], ["y"])
    sess = compile_once(m, tmp_path)
    x = x_of(5, 4, 3)
    feeds = [[x, i64(1), i64(-1), i64(-2), i64(2)],
             [x, i64(-1, 0, 1), i64(SMALL, 2, 3), i64(0, 2, 1), i64(-2, 1, 1)],
             [x_of(2, 6, 3), i64(), i64(), i64(), i64()]]
    check_feeds(m, sess, feeds)
    with pytest.raises(RuntimeInputError, match=r"node 'sl' \(Slice\).*dim 0 2 times"):
        sess.run([x, i64(0, 1), i64(2, 3), i64(0, -3), i64(1, 1)])
    with pytest.raises(RuntimeInputError, match=r"node 'sl' \(Slice\).*out of range"):
        sess.run([x, i64(0), i64(2), i64(3), i64(1)])
    with pytest.raises(RuntimeInputError, match=r"node 'sl' \(Slice\).*entries"):
        sess.run([x, i64(0, 1), i64(2), i64(0), i64(1)])


def test_slice_zero_step_at_run_time_is_an_error(tmp_path):
    nodes = [N("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")]
    m = model(nodes, [("x", T.FLOAT, ["n"])] + [(k, T.INT64, [1]) for k in "s e a st".split()],
              ["y"])
    sess = compile_once(m, tmp_path)
    check_feeds(m, sess, [[x_of(6), i64(1), i64(5), i64(0), i64(2)]])
    with pytest.raises(RuntimeInputError, match=r"node 'sl' \(Slice\).*steps must not be 0"):
        sess.run([x_of(6), i64(1), i64(5), i64(0), i64(0)])
