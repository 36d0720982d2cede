import pytest
from helpers import infer_and_compare
from _common import one


@pytest.mark.parametrize("opset", [7, 13, 21, 25])
@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1]])
def test_transpose(opset, perm):
    kw = {} if perm is None else {"perm": perm}
    infer_and_compare(one("Transpose", [2, "N", 4], opset, **kw))
