import pytest
from onnx import helper, numpy_helper
import numpy as np

from helpers import infer_and_compare
from _common import f32, i64, one


@pytest.mark.parametrize("opset", [11, 13, 18, 19])
def test_resize_scales(opset):
    inits = [f32("roi", []), f32("sc", [1, 1, 2, 1.5])]
    infer_and_compare(one("Resize", [1, 3, 5, 7], opset, inits, inputs=["x", "roi", "sc"]))


@pytest.mark.parametrize("opset", [11, 13, 18, 19])
def test_resize_sizes(opset):
    inits = [f32("roi", []), f32("sc", []), i64("sz", [1, 3, 9, 4])]
    infer_and_compare(one("Resize", [1, 3, 5, 7], opset, inits,
                          inputs=["x", "roi", "sc", "sz"]))


def test_resize_v10():
    infer_and_compare(one("Resize", [1, 3, 5, 7], 10, [f32("sc", [1, 1, 2, 2])]))


def test_resize_axes_v18():
    infer_and_compare(one("Resize", [1, 3, 5, 7], 18, [i64("sz", [10, 14])],
                          inputs=["x", "", "", "sz"], axes=[2, 3]))


@pytest.mark.parametrize("opset", [7, 9])
def test_upsample(opset):
    if opset == 7:
        m = one("Upsample", [1, 3, 5, 7], opset, scales=[1.0, 1.0, 2.0, 3.0])
    else:
        m = one("Upsample", [1, 3, 5, 7], opset, [f32("sc", [1, 1, 2, 3])])
    infer_and_compare(m)
