"""Expand, Tile: our shape inference against onnx's."""
import pytest

from _common import i64, one
from helpers import infer_and_compare


@pytest.mark.parametrize("opset", [8, 13])
@pytest.mark.parametrize("x,shape", [([3, 1], [2, 3, 4]), ([1], [5]), ([2, 1, 6], [1, 1]),
                                     (["N", 1], [1, 7])])
def test_expand(opset, x, shape):
    infer_and_compare(one("Expand", x, opset, [i64("s", shape)]))


@pytest.mark.parametrize("opset", [7, 13])
def test_tile(opset):
    infer_and_compare(one("Tile", [2, 3], opset, [i64("r", [3, 2])]))
    infer_and_compare(one("Tile", ["N", 3], opset, [i64("r", [3, 2])]))
