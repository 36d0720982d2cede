import pytest
from helpers import infer_and_compare
from _common import F, i64, one


@pytest.mark.parametrize("opset", [7, 11, 13])
@pytest.mark.parametrize("axis,idx", [(0, [[0, 1], [1, 2]]), (1, [2]), (1, 0), (-1, [0, 3])])
def test_gather(opset, axis, idx):
    infer_and_compare(one("Gather", [3, 4, 5], opset, [i64("i", idx)], axis=axis))


@pytest.mark.parametrize("opset", [11, 13])
def test_gather_elements(opset):
    infer_and_compare(one("GatherElements", [3, 4], opset, [i64("i", [[0, 1, 2]] * 2)],
                          axis=1))


@pytest.mark.parametrize("opset,batch", [(11, 0), (12, 0), (13, 0), (13, 1)])
def test_gather_nd(opset, batch):
    kw = {"batch_dims": batch} if opset >= 12 else {}
    idx = [[[0, 1]], [[1, 0]]] if batch == 0 else [[1], [2]]
    infer_and_compare(one("GatherND", [2, 3, 4], opset, [i64("i", idx)], **kw))


@pytest.mark.parametrize("opset", [11, 13, 16, 18])
def test_scatter(opset):
    import numpy as np
    from onnx import numpy_helper
    u = numpy_helper.from_array(np.zeros((1, 3), np.float32), "u")
    infer_and_compare(one("ScatterElements", [3, 3], opset, [i64("i", [[0, 1, 2]]), u]))
    u2 = numpy_helper.from_array(np.zeros((2,), np.float32), "u2")
    infer_and_compare(one("ScatterND", [3, 3], opset, [i64("i", [[0, 1], [2, 2]]), u2]))
