"""Squeeze / Unsqueeze with every input dim dynamic, constant or run-time
axes. The lowering used to map the result's dynamic dims onto the input's
dynamic dims in order, ignoring the axes: Squeeze(x[?,?,?,?], axes=[0])
returned x's first three dims (test_squeeze [dynamic], wrong shape)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(0)
X4 = ("x", T.FLOAT, ["a", "b", "c", "d"])


def _f(*s):
    return R.standard_normal(s).astype(np.float32)


def _i(*v):
    return np.array(v, np.int64)


def _sq(op, x, out_rank, axes_input=True, inits=(), opset=13):
    ins = [x] + ([("axes", T.INT64, ["n"])] if axes_input else [])
    names = ["x"] + (["axes"] if axes_input or inits else [])
    return model([h.make_node(op, names, ["y"], name="sq")], ins,
                 [("y", T.FLOAT, [f"o{k}" for k in range(out_rank)])], opset=opset, inits=inits)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_squeeze_runtime_axes(tmp_path, opt_level):
    check_shapes(tmp_path, _sq("Squeeze", X4, 3), [
        {"x": _f(1, 3, 4, 5), "axes": _i(0)}, {"x": _f(3, 1, 4, 5), "axes": _i(-3)},
        {"x": _f(3, 4, 5, 1), "axes": _i(3)}, {"x": _f(2, 1, 1, 2), "axes": _i(2)}],
        opt_level=opt_level)


def test_squeeze_runtime_axes_two(tmp_path):
    check_shapes(tmp_path, _sq("Squeeze", X4, 2), [
        {"x": _f(1, 3, 1, 5), "axes": _i(0, 2)}, {"x": _f(3, 1, 4, 1), "axes": _i(-1, 1)}])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_squeeze_constant_axes(tmp_path, opt_level):
    m = _sq("Squeeze", X4, 3, axes_input=False, inits=[numpy_helper.from_array(_i(1), "axes")])
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3, 4)}, {"x": _f(5, 1, 1, 2)}], opt_level)


def test_squeeze_no_axes(tmp_path):
    m = _sq("Squeeze", ("x", T.FLOAT, ["a", 1, "b"]), 2, axes_input=False)
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3)}, {"x": _f(4, 1, 5)}])
    # a dynamic dim that is 1 would be squeezed too: the result rank changes
    check_rejects(tmp_path, m, [{"x": _f(1, 1, 3)}], r"node 'sq' \(Squeeze\).*rank 2")


def test_squeeze_checks(tmp_path):
    check_rejects(tmp_path, _sq("Squeeze", X4, 3), [
        {"x": _f(2, 3, 4, 5), "axes": _i(0)},      # dim 0 is 2
        {"x": _f(1, 3, 4, 5), "axes": _i(4)},      # out of range
        {"x": _f(1, 1, 4, 5), "axes": _i(0, 1)}],  # rank 2, not 3
        r"node 'sq' \(Squeeze\).*(cannot squeeze axis 0|out of range|rank 3)")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_unsqueeze_runtime_axes(tmp_path, opt_level):
    m = _sq("Unsqueeze", ("x", T.FLOAT, ["a", "b"]), 4)
    check_shapes(tmp_path, m, [
        {"x": _f(2, 3), "axes": _i(0, 3)}, {"x": _f(4, 5), "axes": _i(1, -1)},
        {"x": _f(2, 3), "axes": _i(-4, 2)}, {"x": _f(1, 6), "axes": _i(2, 1)}], opt_level)
    check_rejects(tmp_path, m, [{"x": _f(2, 3), "axes": _i(0, 4)},
                                {"x": _f(2, 3), "axes": _i(1, 1)}],
                  r"node 'sq' \(Unsqueeze\).*(out of range|axes leave)")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_unsqueeze_constant_axes(tmp_path, opt_level):
    m = _sq("Unsqueeze", ("x", T.FLOAT, ["a", "b"]), 4, axes_input=False,
            inits=[numpy_helper.from_array(_i(0, -2), "axes")])
    check_shapes(tmp_path, m, [{"x": _f(2, 3)}, {"x": _f(1, 5)}], opt_level)
