"""If, Loop, Scan, optionals and sequences against onnx, and the inlining
of Ifs whose condition folds to a constant."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.pipeline import to_onnx_ir

F = TP.FLOAT


def _branch(name, shape, value):
    c = helper.make_node("Constant", [], [f"{name}_out"], name=name,
                         value=numpy_helper.from_array(np.full(shape, value, np.float32)))
    return helper.make_graph([c], name, [], [helper.make_tensor_value_info(
        f"{name}_out", F, shape)])


@pytest.mark.parametrize("then_shape,else_shape", [([5], [5]), ([2, 3], [2, 4]),
                                                   ([2], [2, 1])])
def test_if_merges_branch_types(then_shape, else_shape):
    node = helper.make_node("If", ["c"], ["y"], name="if",
                            then_branch=_branch("t", then_shape, 1.0),
                            else_branch=_branch("e", else_shape, 2.0))
    infer_and_compare(make_model([node], [("c", TP.BOOL, [])], ["y"], 16))


@pytest.mark.parametrize("cond,expect", [(True, [2, 3]), (False, [4])])
def test_if_with_constant_condition_is_inlined(cond, expect):
    node = helper.make_node("If", ["c"], ["y"], name="if",
                            then_branch=_branch("t", [2, 3], 1.0),
                            else_branch=_branch("e", [4], 2.0))
    m = make_model([node], [], ["y"], 16, [numpy_helper.from_array(np.array(cond), "c")])
    module = import_model(m, onnx_shape_inference=False)
    to_onnx_ir(module)
    text = str(module)
    assert "onnx.if" not in text
    assert our_output_types(m) == [("f32", expect)]


def _loop_body():
    add = helper.make_node("Add", ["v_in", "one"], ["v_out"], name="add")
    ident = helper.make_node("Identity", ["cond_in"], ["cond_out"], name="id")
    scan = helper.make_node("Identity", ["v_out"], ["scan_out"], name="scan")
    one = helper.make_node("Constant", [], ["one"], name="one",
                           value=numpy_helper.from_array(np.ones(3, np.float32)))
    # body inputs left untyped: their types come from the Loop's operands
    return helper.make_graph(
        [one, add, ident, scan], "body",
        [helper.make_value_info("i", onnx.TypeProto()),
         helper.make_value_info("cond_in", onnx.TypeProto()),
         helper.make_value_info("v_in", onnx.TypeProto())],
        [helper.make_value_info(n, onnx.TypeProto()) for n in ("cond_out", "v_out", "scan_out")])


def test_loop_types_body_from_operands():
    node = helper.make_node("Loop", ["n", "c", "v"], ["v_final", "scans"], name="loop",
                            body=_loop_body())
    m = make_model([node], [("n", TP.INT64, []), ("c", TP.BOOL, []), ("v", F, [3])],
                   ["v_final", "scans"], 16)
    assert our_output_types(m) == [("f32", [3]), ("f32", [None, 3])]


@pytest.mark.parametrize("opset", [9, 16, 25])
@pytest.mark.parametrize("out_axis", [0, 1])
def test_scan(opset, out_axis):
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"], name="a"),
         helper.make_node("Identity", ["s2"], ["y"], name="i")], "body",
        [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("s2", F, [2]), helper.make_tensor_value_info("y", F, [2])])
    node = helper.make_node("Scan", ["init", "xs"], ["final", "ys"], name="scan", body=body,
                            num_scan_inputs=1, scan_output_axes=[out_axis])
    infer_and_compare(make_model([node], [("init", F, [2]), ("xs", F, [5, 2])],
                                 ["final", "ys"], opset))


def test_optional_and_sequences():
    nodes = [helper.make_node("Optional", ["x"], ["o"], name="o"),
             helper.make_node("OptionalHasElement", ["o"], ["has"], name="h"),
             helper.make_node("OptionalGetElement", ["o"], ["got"], name="g"),
             helper.make_node("SequenceConstruct", ["x", "x"], ["seq"], name="s"),
             helper.make_node("SequenceAt", ["seq", "i"], ["at"], name="at"),
             helper.make_node("SequenceLength", ["seq"], ["len"], name="len"),
             helper.make_node("ConcatFromSequence", ["seq"], ["cat"], name="cat", axis=0,
                              new_axis=1)]
    m = make_model(nodes, [("x", F, [3, 4])], ["has", "got", "at", "len", "cat"], 18,
                   [numpy_helper.from_array(np.array(1, np.int64), "i")])
    infer_and_compare(m)
