"""Expand / Tile with dynamic input dims and shapes / repeats known only at
run time: compiled once, compared with onnx.reference at several shapes and
values; broadcast and sign violations are run-time errors naming the node."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(5)


def _f(*s):
    return R.standard_normal(s).astype(np.float32)


def _i(*v):
    return np.array(v, np.int64)


def _expand(x_dims, s_dims, out_dims):
    return model([h.make_node("Expand", ["x", "s"], ["y"], name="ex")],
                 [("x", T.FLOAT, x_dims), ("s", T.INT64, s_dims)], [("y", T.FLOAT, out_dims)],
                 opset=13)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_expand_runtime_shape_and_dims(tmp_path, opt_level):
    # every input dim dynamic: a run-time 1 broadcasts, a shape 1 keeps the input's dim
    m = _expand(["a", "b"], [3], ["p", "q", "r"])
    check_shapes(tmp_path, m, [{"x": _f(3, 1), "s": _i(2, 1, 4)},
                               {"x": _f(1, 4), "s": _i(2, 3, 1)},
                               {"x": _f(2, 3), "s": _i(1, 2, 3)},
                               {"x": _f(1, 1), "s": _i(1, 0, 5)}], opt_level=opt_level)


def test_expand_shape_shorter_than_input_run_time_length(tmp_path):
    # the shape operand's length is only known at run time (<= input rank)
    m = _expand(["a", "b", "c"], ["n"], ["p", "q", "r"])
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3), "s": _i(4, 1)},
                               {"x": _f(1, 3, 1), "s": _i(5, 3, 2)},
                               {"x": _f(2, 3, 1), "s": _i(4)},
                               {"x": _f(2, 3, 4), "s": _i()}])
    check_rejects(tmp_path, m, [{"x": _f(2, 3, 1), "s": _i(1, 1, 1, 1)}],
                  r"node 'ex' \(Expand\).*4 elements, more than the result rank 3")


def test_expand_checks(tmp_path):
    m = _expand(["a", "b"], [2], ["p", "q"])
    check_rejects(tmp_path, m, [{"x": _f(3, 4), "s": _i(2, 4)},
                                {"x": _f(3, 4), "s": _i(3, -4)}],
                  r"node 'ex' \(Expand\).*(cannot be expanded|negative dim -4)")


def test_expand_exporter_chain(tmp_path):
    # Expand to Shape(y): a mask broadcast to a dynamic (batch, seq) shape
    m = model([h.make_node("Shape", ["y"], ["s"]), h.make_node("Expand", ["x", "s"], ["z"])],
              [("x", T.FLOAT, [1, "t"]), ("y", T.FLOAT, ["b", "t"])], [("z", T.FLOAT, ["b", "t"])],
              opset=13)
    check_shapes(tmp_path, m, [{"x": _f(1, 3), "y": _f(4, 3)}, {"x": _f(1, 5), "y": _f(2, 5)}])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_tile_runtime_repeats(tmp_path, opt_level):
    m = model([h.make_node("Tile", ["x", "r"], ["y"], name="ti")],
              [("x", T.FLOAT, ["a", "b"]), ("r", T.INT64, ["n"])], [("y", T.FLOAT, ["p", "q"])],
              opset=13)
    check_shapes(tmp_path, m, [{"x": _f(2, 3), "r": _i(2, 1)}, {"x": _f(1, 4), "r": _i(3, 2)},
                               {"x": _f(3, 2), "r": _i(0, 2)}], opt_level=opt_level)
    check_rejects(tmp_path, m, [{"x": _f(2, 3), "r": _i(2, -1)}, {"x": _f(2, 3), "r": _i(2)}],
                  r"node 'ti' \(Tile\).*(negative value -1|'repeats' has 1 elements, expected 2)")
