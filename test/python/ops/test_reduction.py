import pytest
from helpers import infer_and_compare
from _common import i64, one

REDUCE = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
          "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


def _axes_input(op, opset):
    return opset >= (13 if op == "ReduceSum" else 18)


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("opset", [7, 11, 13, 18, 20, 25])
@pytest.mark.parametrize("axes,keep", [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reduce(op, opset, axes, keep):
    x = [2, "N", 4]
    if axes is None:
        m = one(op, x, opset, keepdims=keep)
    elif _axes_input(op, opset):
        m = one(op, x, opset, [i64("a", axes)], keepdims=keep)
    else:
        m = one(op, x, opset, axes=axes, keepdims=keep)
    infer_and_compare(m)


@pytest.mark.parametrize("op,opset", [("ReduceSum", 13), ("ReduceMax", 18)])
def test_reduce_noop_with_empty_axes(op, opset):
    infer_and_compare(one(op, [2, 3], opset, noop_with_empty_axes=1))


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("opset", [7, 11, 12, 13])
@pytest.mark.parametrize("axis,keep", [(0, 1), (1, 0)])
def test_arg(op, opset, axis, keep):
    infer_and_compare(one(op, [3, "N", 5], opset, axis=axis, keepdims=keep))


@pytest.mark.parametrize("opset", [7, 10, 11, 24])
def test_topk(opset):
    if opset < 10:
        m = one("TopK", [3, 8], opset, outputs=("v", "i"), k=2)
    else:
        m = one("TopK", [3, 8], opset, [i64("k", [2])], outputs=("v", "i"))
    infer_and_compare(m)


@pytest.mark.parametrize("opset", [11, 14])
def test_cumsum(opset):
    import numpy as np
    from onnx import numpy_helper
    ax = numpy_helper.from_array(np.array(1, np.int64), "ax")
    infer_and_compare(one("CumSum", ["N", 5], opset, [ax]))
