"""DepthToSpace, SpaceToDepth: our shape inference against onnx's."""
import pytest

from _common import one
from helpers import infer_and_compare


@pytest.mark.parametrize("opset", [7, 11, 13])
def test_depth_space(opset):
    infer_and_compare(one("DepthToSpace", [1, 8, 3, 5], opset, blocksize=2))
    infer_and_compare(one("SpaceToDepth", [1, 2, 4, 6], opset, blocksize=2))
