"""Merging a chain of reshape-like ops into one Reshape (-O3,
reshape_chains.merge_reshapes) must not write an empty result's shape as
Reshape's shape input: a 0 there means 'copy the input's dim' (fuzz
s2701-10: Split [4] into [0, 4], Flatten(axis 1) -> [0, 1], Flatten(axis 0)
-> [1, 0] became Reshape(x[0], [1, 0]), rejected as invalid at -O3)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper as h

from onnx_mlir_py.testing.check import assert_match, reference, run_compiled


def _split_flatten_flatten():
    nodes = [h.make_node("Split", ["x", "sizes"], ["a", "b"], axis=0),
             h.make_node("Flatten", ["a"], ["f1"], axis=1),
             h.make_node("Flatten", ["f1"], ["y"], axis=0)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.INT32, [4])],
                     [h.make_tensor_value_info("y", TP.INT32, None)],
                     initializer=[onnx.numpy_helper.from_array(np.array([0, 4], np.int64),
                                                               "sizes")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


def _reshape_flatten():
    nodes = [h.make_node("Slice", ["x", "s", "e", "ax"], ["a"]),         # [2, 0]
             h.make_node("Reshape", ["a", "shape"], ["r"], allowzero=1),  # [0, 4]
             h.make_node("Flatten", ["r"], ["y"], axis=2)]            # [0, 1]
    init = [onnx.numpy_helper.from_array(np.array(v, np.int64), n)
            for n, v in (("s", [0]), ("e", [0]), ("ax", [1]), ("shape", [0, 4]))]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 6])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], initializer=init)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("build,x", [
    (_split_flatten_flatten, np.arange(4, dtype=np.int32)),
    (_reshape_flatten, np.ones((2, 6), np.float32))])
def test_empty_reshape_chain(build, x, opt_level):
    m = build()
    want = reference(m, {"x": x}, "onnxruntime")
    got = run_compiled(m, {"x": x}, opt_level)
    assert got[0].shape == want[0].shape
    assert_match(got, want)
