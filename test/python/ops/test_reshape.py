"""Reshape, Squeeze, Unsqueeze, Expand, Tile, DepthToSpace, SpaceToDepth,
Trilu: our shape inference against onnx's, plus the end-to-end fold of a
Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain."""
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


@pytest.mark.parametrize("opset", [8, 13])
@pytest.mark.parametrize("x,shape", [([3, 1], [2, 3, 4]), ([1], [5]), ([2, 1, 6], [1, 1]),
                                     (["N", 1], [1, 7])])
def test_expand(opset, x, shape):
    infer_and_compare(one("Expand", x, opset, [i64("s", shape)]))


@pytest.mark.parametrize("opset", [7, 13])
def test_tile(opset):
    infer_and_compare(one("Tile", [2, 3], opset, [i64("r", [3, 2])]))
    infer_and_compare(one("Tile", ["N", 3], opset, [i64("r", [3, 2])]))


@pytest.mark.parametrize("opset", [7, 11, 13])
def test_depth_space(opset):
    infer_and_compare(one("DepthToSpace", [1, 8, 3, 5], opset, blocksize=2))
    infer_and_compare(one("SpaceToDepth", [1, 2, 4, 6], opset, blocksize=2))


def test_trilu():
    infer_and_compare(one("Trilu", [2, 4, 5], 14, upper=0))


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
