import pytest
from helpers import infer_and_compare
from _common import i64, one


@pytest.mark.parametrize("opset", [7, 11, 13])
def test_concat(opset):
    infer_and_compare(one("Concat", [2, 3], opset, inputs=["x", "x", "x"], axis=1))
    if opset >= 11:
        infer_and_compare(one("Concat", ["N", 3], opset, inputs=["x", "x"], axis=-2))


@pytest.mark.parametrize("opset", [7, 11, 13, 18])
def test_split_equal(opset):
    if opset >= 18:
        m = one("Split", [6, 4], opset, outputs=("a", "b", "c"), axis=0, num_outputs=3)
    else:
        m = one("Split", [6, 4], opset, outputs=("a", "b", "c"), axis=0)
    infer_and_compare(m)


def test_split_uneven_num_outputs():
    infer_and_compare(one("Split", [7, 4], 18, outputs=("a", "b", "c"), num_outputs=3))


@pytest.mark.parametrize("opset", [7, 11, 13, 18])
def test_split_sizes(opset):
    if opset < 13:
        m = one("Split", [2, 9], opset, outputs=("a", "b"), axis=1, split=[4, 5])
    else:
        m = one("Split", [2, 9], opset, [i64("s", [4, 5])], outputs=("a", "b"), axis=1)
    infer_and_compare(m)
