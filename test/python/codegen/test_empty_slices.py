"""Slices and reshapes of tensors that become empty (a static size-0 dim) only after
canonicalization folds a run-time dim to 0 (fuzzer case s2000-413: a dynamic
[n] input, sliced to nothing and broadcast against itself, failed
bufferization with "offset 0 is out-of-bounds: 0 >= 0")."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import assert_match, reference, run_compiled


def _i64(name, v):
    return nh.from_array(np.array(v, np.int64), name)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op,dtype,np_type", [("Add", T.FLOAT, np.float32),
                                              ("Or", T.BOOL, np.bool_)])
def test_broadcast_against_an_empty_slice(op, dtype, np_type, opt_level):
    g = h.make_graph([h.make_node("Slice", ["a", "s", "e", "ax", "st"], ["v"]),
                      h.make_node(op, ["a", "v"], ["y"])], "g",
                     [h.make_tensor_value_info("a", dtype, ["n"])],
                     [h.make_tensor_value_info("y", dtype, None)],
                     [_i64("s", [1]), _i64("e", [1]), _i64("ax", [0]), _i64("st", [2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    for n in (1, 0):
        feeds = {"a": np.ones(n, np_type)}
        got = run_compiled(m, feeds, opt_level)
        assert got[0].shape == (0,)
        assert_match(got, reference(m, feeds, "onnxruntime"))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_flatten_of_an_empty_slice(opt_level):
    """Fuzzer case s2000-1582: [0, n + 3, 0] from a Pad and a Slice that empties
    two axes, flattened at -1 into [?, 0] and cast to [0, 0]: memref
    canonicalization folded the cast into a collapse_shape with a static 0
    from a dynamic group, which its verifier rejects (at -O0). The collapse
    of an empty tensor is an empty tensor."""
    g = h.make_graph([h.make_node("Transpose", ["x"], ["t"], perm=[1, 2, 0]),
                      h.make_node("Pad", ["t", "p", "c"], ["q"]),
                      h.make_node("Slice", ["q", "s", "e", "ax", "st"], ["v"]),
                      h.make_node("Flatten", ["v"], ["f"], axis=-1),
                      h.make_node("MatMul", ["f", "w"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [4, 6, "n"]),
                      h.make_tensor_value_info("w", T.FLOAT, [0, 5])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [_i64("p", [-1, 2, 0, 0, 1, -1]),
                      nh.from_array(np.array(-1.5, np.float32), "c"),
                      _i64("s", [4, 2 ** 62]), _i64("e", [-3, -2 ** 62]), _i64("ax", [0, -1]),
                      _i64("st", [1, 1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    for n in (5, 1):
        feeds = {"x": np.ones((4, 6, n), np.float32), "w": np.ones((0, 5), np.float32)}
        got = run_compiled(m, feeds, opt_level)
        assert got[0].shape == (0, 5)
        assert_match(got, reference(m, feeds, "onnxruntime"))
