"""Softmax, LogSoftmax, Hardmax (v1/v11 coerced-2D and v13 semantics: the
output shape is the input's either way)."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def model(op, x, opset, **attrs):
    node = helper.make_node(op, ["x"], ["y"], name="s", **attrs)
    return make_model([node], [("x", F, x)], ["y"], opset)


@pytest.mark.parametrize("opset", [7, 11, 13, 25])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("x,axis", [([2, 3, 4], None), (["N", 10], 1), ([2, 3, 4], -1),
                                    (["N", 3, 4, 5], 2), ([7], 0)])
def test_softmax(op, opset, x, axis):
    attrs = {} if axis is None else dict(axis=axis)
    got = infer_and_compare(model(op, x, opset, **attrs))
    assert got == [("f32", [None if d == "N" else d for d in x])]


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
def test_softmax_bad_axis(op, opset):
    with pytest.raises(VerificationError,
                       match=rf"node 's' \({op}\): attribute 'axis' = 3: expected a value in "
                             r"\[-3, 2\] for input of rank 3"):
        our_output_types(model(op, [2, 3, 4], opset, axis=3))
