"""Dropout (output + mask, ratio input)."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def model(op, ins, outs, opset, inits=(), **attrs):
    names = [n for n, _, _ in ins] + [t.name for t in inits]
    node = helper.make_node(op, names, list(outs), name="m", **attrs)
    return make_model([node], ins, list(outs), opset, inits)


@pytest.mark.parametrize("opset,mask", [(10, "i1"), (12, "i1"), (13, "i1"), (22, "i1"),
                                        (25, "i1")])
@pytest.mark.parametrize("x", [[2, 3, 4], ["N", 8]])
def test_dropout_mask(opset, mask, x):
    got = infer_and_compare(model("Dropout", [("x", F, x)], ["y", "mask"], opset))
    shape = [None if d == "N" else d for d in x]
    assert got == [("f32", shape), (mask, shape)]


def test_dropout_v7_mask_is_data_type():
    # onnx 1.23 leaves the v7 mask untyped; check ours directly.
    got = our_output_types(model("Dropout", [("x", F, [2, 3])], ["y", "mask"], 7))
    assert got == [("f32", [2, 3]), ("f32", [2, 3])]


@pytest.mark.parametrize("opset", [7, 12, 22])
def test_dropout_output_only(opset):
    assert infer_and_compare(model("Dropout", [("x", F, ["N", 5])], ["y"], opset)) == \
        [("f32", [None, 5])]


def test_dropout_ratio_input():
    r = numpy_helper.from_array(np.array(0.3, dtype=np.float32), "r")
    m = model("Dropout", [("x", F, [4, 5])], ["y", "mask"], 13, inits=[r])
    assert infer_and_compare(m) == [("f32", [4, 5]), ("i1", [4, 5])]


@pytest.mark.parametrize("op,ins,opset,inits,attrs,msg", [
    ("Dropout", [("x", F, [2, 3])], 10, (), dict(ratio=1.5),
     r"attribute 'ratio' = 1.5: expected a value in \[0, 1\)"),
    ("Dropout", [("x", F, [2, 3])], 13,
     (numpy_helper.from_array(np.array([0.1, 0.2], dtype=np.float32), "r"),), {},
     r"input 'ratio' has shape \[2\]: expected a scalar"),
])
def test_invalid(op, ins, opset, inits, attrs, msg):
    with pytest.raises(VerificationError, match=rf"node 'm' \({op}\): " + msg):
        our_output_types(model(op, ins, ["y"], opset, inits, **attrs))
