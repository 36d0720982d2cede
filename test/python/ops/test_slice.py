import pytest
from helpers import infer_and_compare
from _common import i64, one

CASES = [  # starts, ends, axes, steps
    ([1], [3], [0], None), ([0, 1], [-1, 100], None, None), ([-3], [-1], [1], None),
    ([5], [-100], [0], [-1]), ([0], [10], [1], [3]), ([2], [1], [0], None),
    ([9223372036854775807], [-9223372036854775807], [0], [-2]),
]


@pytest.mark.parametrize("opset", [10, 11, 13])
@pytest.mark.parametrize("starts,ends,axes,steps", CASES)
def test_slice(opset, starts, ends, axes, steps):
    inits = [i64("s", starts), i64("e", ends)]
    if axes is not None or steps is not None:
        inits.append(i64("a", axes if axes is not None else list(range(len(starts)))))
    if steps is not None:
        inits.append(i64("st", steps))
    infer_and_compare(one("Slice", [6, 7], opset, inits))


@pytest.mark.parametrize("starts,ends,axes", [([1], [3], [0]), ([0, 1], [-1, 100], None)])
def test_slice_v1(starts, ends, axes):
    kw = {"starts": starts, "ends": ends}
    if axes is not None:
        kw["axes"] = axes
    infer_and_compare(one("Slice", [6, 7], 7, **kw))


def test_slice_dynamic_dim():
    infer_and_compare(one("Slice", ["N", 7], 13, [i64("s", [1]), i64("e", [3]),
                                                   i64("a", [1])]))
