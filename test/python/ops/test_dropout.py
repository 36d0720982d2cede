"""Dropout (output + mask), LRN, Flatten."""
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


@pytest.mark.parametrize("opset", [7, 13, 25])
@pytest.mark.parametrize("x", [[1, 8, 5, 5], ["N", 8, 5]])
def test_lrn(opset, x):
    got = infer_and_compare(model("LRN", [("x", F, x)], ["y"], opset, size=3))
    assert got == [("f32", [None if d == "N" else d for d in x])]


@pytest.mark.parametrize("opset", [7, 9, 11, 13, 21, 25])
@pytest.mark.parametrize("x,axis,want", [
    ([2, 3, 4, 5], 1, [2, 60]), ([2, 3, 4, 5], 0, [1, 120]), ([2, 3, 4, 5], 4, [120, 1]),
    ([2, 3, 4, 5], 2, [6, 20]), (["N", 3, 4], 1, [None, 12]), ([2, "H", 4], 2, [None, 4]),
])
def test_flatten(opset, x, axis, want):
    assert infer_and_compare(model("Flatten", [("x", F, x)], ["y"], opset, axis=axis)) == \
        [("f32", want)]


@pytest.mark.parametrize("opset", [11, 13, 25])
def test_flatten_negative_axis(opset):
    assert infer_and_compare(model("Flatten", [("x", F, [2, 3, 4])], ["y"], opset, axis=-1)) == \
        [("f32", [6, 4])]


@pytest.mark.parametrize("op,ins,opset,inits,attrs,msg", [
    ("Flatten", [("x", F, [2, 3])], 13, (), dict(axis=3),
     r"attribute 'axis' = 3: expected a value in \[-2, 2\] for input of rank 2"),
    ("Flatten", [("x", F, [2, 3])], 9, (), dict(axis=-1),
     r"attribute 'axis' = -1: expected a value in \[0, 2\]"),
    ("LRN", [("x", F, [1, 3, 4, 4])], 13, (), dict(size=0),
     r"attribute 'size' = 0: expected >= 1"),
    ("Dropout", [("x", F, [2, 3])], 10, (), dict(ratio=1.5),
     r"attribute 'ratio' = 1.5: expected a value in \[0, 1\)"),
    ("Dropout", [("x", F, [2, 3])], 13,
     (numpy_helper.from_array(np.array([0.1, 0.2], dtype=np.float32), "r"),), {},
     r"input 'ratio' has shape \[2\]: expected a scalar"),
])
def test_invalid(op, ins, opset, inits, attrs, msg):
    with pytest.raises(VerificationError, match=rf"node 'm' \({op}\): " + msg):
        our_output_types(model(op, ins, ["y"], opset, inits, **attrs))
