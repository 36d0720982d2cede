import pytest
from helpers import infer_and_compare
from _common import i64, one


@pytest.mark.parametrize("opset", [7, 11, 13, 18, 19, 21, 25])
@pytest.mark.parametrize("pads", [[1, 2, 3, 4], [0, -1, 0, 2]])
def test_pad(opset, pads):
    if opset < 11:
        m = one("Pad", [3, 5], opset, pads=pads)
    else:
        m = one("Pad", [3, 5], opset, [i64("p", pads)])
    infer_and_compare(m)


@pytest.mark.parametrize("opset", [18, 25])
def test_pad_axes(opset):
    m = one("Pad", [3, 5, "N"], opset, [i64("p", [1, 2])], inputs=["x", "p", "", "a"])
    m.graph.initializer.append(i64("a", [-2]))
    infer_and_compare(m)
