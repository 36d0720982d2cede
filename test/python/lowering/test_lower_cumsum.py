"""CumSum and CumProd against onnx.reference: every exclusive/reverse
combination, both axes, negative axis, float and int32 inputs; compiled
once with dynamic dims and run at two run-time shapes."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h, numpy_helper

from dynamic_util import check_shapes, model

R = np.random.default_rng(0)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumulative_dynamic(tmp_path, op, exclusive, reverse, axis):
    opset = 26 if op == "CumProd" else 14
    ax = numpy_helper.from_array(np.array(axis, np.int64), "axis")
    m = model([h.make_node(op, ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
              [("x", T.FLOAT, ["a", "b"])], opset=opset, inits=[ax])
    feeds = [{"x": R.uniform(0.5, 1.5, s).astype(np.float32)} for s in [(3, 4), (5, 1)]]
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-6)


def test_cumprod_int32(tmp_path):
    ax = numpy_helper.from_array(np.array(1, np.int64), "axis")
    m = model([h.make_node("CumProd", ["x", "axis"], ["y"], exclusive=1)],
              [("x", T.INT32, ["a", "b", "c"])], opset=26, inits=[ax])
    feeds = [{"x": R.integers(-3, 4, s).astype(np.int32)} for s in [(2, 4, 3), (1, 3, 2)]]
    check_shapes(tmp_path, m, feeds)


@pytest.mark.parametrize("op", ["CumSum", "CumProd"])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 1)])
def test_cumulative_runtime_axis(tmp_path, op, exclusive, reverse):
    """The axis as an input (the node tests do this): every axis, negative too."""
    opset = 26 if op == "CumProd" else 14
    m = model([h.make_node(op, ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
              [("x", T.FLOAT, ["a", "b", "c"]), ("axis", T.INT32, [])], opset=opset)
    feeds = [{"x": R.uniform(0.5, 1.5, s).astype(np.float32), "axis": np.array(a, np.int32)}
             for s in [(2, 3, 4), (3, 1, 2)] for a in (0, 1, 2, -1, -3)]
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-6)


def test_cumprod_runtime_axis_out_of_range(tmp_path):
    from dynamic_util import check_rejects
    m = model([h.make_node("CumProd", ["x", "axis"], ["y"], name="cp")],
              [("x", T.FLOAT, [2, 3]), ("axis", T.INT64, [])], opset=26)
    check_rejects(tmp_path, m, [{"x": np.ones((2, 3), np.float32), "axis": np.array(a)}
                                for a in (2, -3)], match=r"cp.*axis -?\d+ is out of range \[-2, 1\]")
