"""Values read from data that fed arithmetic which trapped or wrapped: an
integer Div/Mod by zero (SIGFPE, onnxruntime: "Integer division by zero"),
``INT_MIN / -1`` (SIGFPE; two's complement wraps), an integer ReduceMean over
an empty axis (0 / 0: SIGFPE), a Range whose length is inf, NaN or overflows
i64 (wrapped to 0 elements, silently), a Reshape whose dims' product wraps
to the input's count ([4, 2**62 + 3] of 12 elements: a [4, 2**62+3] result
over a 12-element buffer). Each bad input must raise RuntimeInputError naming
the node, run in a child process (a signal fails the test, not the session);
good inputs match onnxruntime."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py.runtime import RuntimeInputError
from onnx_mlir_py.testing.isolated import compile_isolated, run_isolated

from onnx_models import graph_model


def _model(nodes, inputs, out_type, opset=18):
    return graph_model(nodes, inputs, out_type=out_type, opset=opset)


def _check(tmp_path, m, good, bad, match, opt_level=3):
    so = compile_isolated(m, tmp_path / "m.so", opt_level=opt_level)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in m.graph.input]
    for feeds, got in zip(good, run_isolated(so, good)):
        np.testing.assert_array_equal(got[0], ref.run(None, dict(zip(names, feeds)))[0])
    for feeds in bad:
        with pytest.raises(RuntimeInputError, match=match):
            run_isolated(so, [feeds])
    return so


@pytest.mark.parametrize("op,opt_level", [("Div", 0), ("Div", 3), ("Mod", 3)])
@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8])
def test_integer_division_by_zero(tmp_path, op, opt_level, dt):
    tt = {np.int32: T.INT32, np.int64: T.INT64, np.uint8: T.UINT8}[dt]
    m = _model([h.make_node(op, ["a", "b"], ["y"], name="dv")],
               [("a", tt, [None]), ("b", tt, [None, None])], tt)
    a = np.array([7, 100, 3], dt)
    _check(tmp_path, m, good=[[a, np.array([[2, 3, 5], [9, 1, 2]], dt)], [a[:1], np.ones((1, 1), dt)]],
           bad=[[a, np.array([[2, 3, 5], [9, 0, 2]], dt)], [a[:0], np.zeros((1, 1), dt)]]
           if dt is not np.uint8 or op != "Div" else [[a, np.array([[2, 0, 5]], dt)]],
           match=rf"node 'dv' \({op}\): integer division by zero", opt_level=opt_level)


def test_int_min_divided_by_minus_one_wraps(tmp_path):
    """onnxruntime itself dies of SIGFPE here (not compared): two's complement
    gives INT_MIN / -1 == INT_MIN and INT_MIN % -1 == 0."""
    lo = np.iinfo(np.int32).min
    m = _model([h.make_node("Div", ["a", "b"], ["q"], name="d"),
                h.make_node("Mod", ["a", "b"], ["r"], name="m", fmod=1),
                h.make_node("Concat", ["q", "r"], ["y"], axis=0)],
               [("a", T.INT32, [None]), ("b", T.INT32, [None])], T.INT32)
    so = compile_isolated(m, tmp_path / "m.so")
    (y,), = run_isolated(so, [[np.array([lo, lo, 7, -7], np.int32),
                               np.array([-1, 1, -1, -2], np.int32)]])
    np.testing.assert_array_equal(y, [lo, lo, -7, 3, 0, 0, 0, -1])


def test_constant_zero_divisor_fails_every_run(tmp_path):
    m = _model([h.make_node("Div", ["a", "z"], ["y"], name="dz")], [("a", T.INT64, [2])],
               T.INT64)
    m.graph.initializer.append(h.make_tensor("z", T.INT64, [2], [3, 0]))
    so = compile_isolated(m, tmp_path / "m.so")
    with pytest.raises(RuntimeInputError, match=r"node 'dz' \(Div\): integer division by zero"):
        run_isolated(so, [[np.array([6, 6])]])


def test_integer_reduce_mean_of_empty_axis(tmp_path):
    m = _model([h.make_node("ReduceMean", ["x"], ["y"], name="rm", axes=[1], keepdims=0)],
               [("x", T.INT32, [None, None])], T.INT32, opset=13)
    _check(tmp_path, m, good=[[np.arange(6, dtype=np.int32).reshape(2, 3)],
                              [np.zeros((2, 0), np.int32)]], bad=[], match="")


@pytest.mark.parametrize("dt", [np.int64, np.float32])
def test_range_length_that_cannot_be_counted(tmp_path, dt):
    tt = T.INT64 if dt is np.int64 else T.FLOAT
    m = _model([h.make_node("Range", ["s", "l", "d"], ["y"], name="rg")],
               [(n, tt, []) for n in "sld"], tt)
    s = lambda *v: [np.array(x, dt) for x in v]     # noqa: E731
    bad = [s(-2 ** 62, 2 ** 62, 1), s(-2 ** 62, 2 ** 62, 2 ** 61), s(0, 2 ** 63 - 1, 1)]
    if dt is np.float32:
        bad = [s(0, np.inf, 1), s(0, np.nan, 1), s(0, 1e30, 1), s(-np.inf, 0, 1)]
    _check(tmp_path, m, good=[s(0, 10, 3), s(10, 0, -4), s(5, 5, 1)], bad=bad,
           match=r"node 'rg' \(Range\): the number of elements .* is not finite or too large")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_reshape_product_that_wraps(tmp_path, opt_level):
    """The result is the graph output itself (a view: no allocation check):
    [4, 2**62 + 3] would have been returned over x's 12 elements."""
    m = _model([h.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
               [("x", T.FLOAT, [None, None]), ("s", T.INT64, [2])], T.FLOAT)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    z = np.zeros((0, 3), np.float32)
    _check(tmp_path, m, good=[[x, np.array([4, 3])], [x, np.array([-1, 6])],
                              [z, np.array([0, 5])]],
           bad=[[x, np.array([4, 2 ** 62 + 3])], [z, np.array([2 ** 32, 2 ** 32])]],
           match=r"node 'rs' \(Reshape\): cannot reshape input .*: the product of its dims "
                 r"overflows", opt_level=opt_level)
