"""Reshape, Squeeze, Unsqueeze, Flatten: our shape inference against onnx's,
plus the end-to-end fold of a Shape -> Gather -> Unsqueeze -> Concat ->
Reshape chain."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def one(op, x_shape, opset, inits=(), extra_inputs=(), **attrs):
    names = ["x"] + [t.name for t in inits] + list(extra_inputs)
    node = helper.make_node(op, names, ["y"], name="n", **attrs)
    return make_model([node], [("x", F, x_shape)], ["y"], opset, inits)


@pytest.mark.parametrize("opset", [7, 13, 14, 19, 21, 25])
@pytest.mark.parametrize("x,shape", [
    ([2, 3, 4], [0, -1]), ([2, 3, 4], [4, 0, 2]), ([2, 3, 4], [-1]),
    ([2, 3, 4], [2, 2, 2, 3]), (["N", 3, 4], [0, 12]), (["N", 3, 4], [0, -1]),
])
def test_reshape(opset, x, shape):
    infer_and_compare(one("Reshape", x, opset, [i64("s", shape)]))


def test_reshape_allowzero():
    m = one("Reshape", [0, 3], 14, [i64("s", [3, 0])], allowzero=1)
    assert infer_and_compare(m)[0][1] == [3, 0]


@pytest.mark.parametrize("opset", [7, 11, 13, 21, 25])
@pytest.mark.parametrize("x,axes", [([1, 3, 1, 4], [0, 2]), ([1, 3, 1, 4], [-2]),
                                    ([1, 3, 1, 4], None)])
def test_squeeze(opset, x, axes):
    if opset < 11 and axes and any(a < 0 for a in axes):
        # v1 takes non-negative axes only: the verifier rejects the node
        with pytest.raises(VerificationError, match="negative axes need v11"):
            our_output_types(one("Squeeze", x, opset, axes=axes))
        return
    if axes is None:
        m = one("Squeeze", x, opset)
    elif opset < 13:
        m = one("Squeeze", x, opset, axes=axes)
    else:
        m = one("Squeeze", x, opset, [i64("a", axes)])
    infer_and_compare(m)


@pytest.mark.parametrize("opset", [7, 11, 13, 25])
@pytest.mark.parametrize("x,axes", [([3, 4], [0]), ([3, 4], [0, 3]), ([3, "N"], [-1, 1])])
def test_unsqueeze(opset, x, axes):
    if opset < 11 and any(a < 0 for a in axes):
        with pytest.raises(VerificationError, match="negative axes need v11"):
            our_output_types(one("Unsqueeze", x, opset, axes=axes))
        return
    m = one("Unsqueeze", x, opset, axes=axes) if opset < 13 else \
        one("Unsqueeze", x, opset, [i64("a", axes)])
    infer_and_compare(m)


@pytest.mark.parametrize("opset", [7, 9, 11, 13, 21, 25])
@pytest.mark.parametrize("x,axis,want", [
    ([2, 3, 4, 5], 1, [2, 60]), ([2, 3, 4, 5], 0, [1, 120]), ([2, 3, 4, 5], 4, [120, 1]),
    ([2, 3, 4, 5], 2, [6, 20]), (["N", 3, 4], 1, [None, 12]), ([2, "H", 4], 2, [None, 4]),
])
def test_flatten(opset, x, axis, want):
    assert infer_and_compare(one("Flatten", x, opset, axis=axis)) == \
        [("f32", want)]


@pytest.mark.parametrize("opset", [11, 13, 25])
def test_flatten_negative_axis(opset):
    assert infer_and_compare(one("Flatten", [2, 3, 4], opset, axis=-1)) == \
        [("f32", [6, 4])]


@pytest.mark.parametrize("opset,x,axis,msg", [
    (13, [2, 3], 3, r"attribute 'axis' = 3: expected a value in \[-2, 2\] for input of rank 2"),
    (9, [2, 3], -1, r"attribute 'axis' = -1: expected a value in \[0, 2\]"),
])
def test_flatten_invalid(opset, x, axis, msg):
    with pytest.raises(VerificationError, match=r"node 'n' \(Flatten\): " + msg):
        our_output_types(one("Flatten", x, opset, axis=axis))


def _shape_chain(x_shape, opset=13):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["i0"], name="c0",
                         value=numpy_helper.from_array(np.array(0, np.int64))),
        helper.make_node("Constant", [], ["i1"], name="c1", value_ints=[1]),
        helper.make_node("Gather", ["s", "i0"], ["g0"], axis=0, name="gather0"),
        helper.make_node("Gather", ["s", "i1"], ["g1"], axis=0, name="gather1"),
        helper.make_node("Unsqueeze", ["g0", "ax"], ["u0"], name="unsqueeze"),
        helper.make_node("Concat", ["u0", "g1"], ["c"], axis=0, name="concat"),
        helper.make_node("Concat", ["c", "m1"], ["target"], axis=0, name="concat2"),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    return make_model(nodes, [("x", F, x_shape)], ["y"], opset,
                      [i64("ax", [0]), i64("m1", [-1])])


def test_shape_chain_folds_to_static_reshape():
    m = _shape_chain([2, 3, 4])
    assert our_output_types(m) == [("f32", [2, 3, 4])]
    infer_and_compare(m)


def test_shape_chain_dynamic_batch():
    # dim 0 stays dynamic, dim 1 is known from Shape of a ?x3x4 input
    got = our_output_types(_shape_chain(["N", 3, 4]))
    assert got[0][1][:2] == [None, 3]
