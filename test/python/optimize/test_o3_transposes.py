"""Transposes that move the innermost dim (passes/optimize/transposes.py):
16 x 16 blocks, whole blocks only. Every case is compared with numpy exactly,
at 1 and 2 threads; the plan's choice (which ops it takes) is checked on the
ops themselves."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.transposes import inner_loops
from onnx_mlir_py.runtime import ExecutionSession

CASES = [
    ([1, 112, 112, 64], [0, 3, 1, 2], T.FLOAT),     # NHWC -> NCHW (ResNet-50's stem MaxPool)
    ([1, 64, 32, 48], [0, 2, 3, 1], T.FLOAT),       # NCHW -> NHWC
    ([2, 32, 16, 16], [0, 3, 1, 2], T.INT32),       # batch 2, i32
    ([48, 32], [1, 0], T.FLOAT),                    # 2-D
    ([3, 16, 5, 32], [2, 3, 0, 1], T.FLOAT),        # two dims move
    ([1, 64, 56, 56], [0, 2, 3, 1], T.FLOAT),       # W = 56: partial blocks, left as it was
    ([2, 37, 19, 24], [0, 3, 1, 2], T.FLOAT),       # odd sizes: left
]


def _model(shape, perm, et, relu=False):
    out = [shape[p] for p in perm]
    nodes = [h.make_node("Transpose", ["x"], ["t" if relu else "y"], perm=perm)]
    if relu:
        nodes.append(h.make_node("Relu", ["t"], ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", et, shape)],
                     [h.make_tensor_value_info("y", et, out)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _x(shape, et):
    rng = np.random.default_rng(len(shape))
    if et == T.INT32:
        return rng.integers(-2**31, 2**31 - 1, shape, dtype=np.int64).astype(np.int32)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, perm, et", CASES)
def test_transpose_equals_numpy(tmp_path, shape, perm, et, threads):
    lib = onnx_mlir_py.compile(_model(shape, perm, et), tmp_path / "t.so", opt_level=3)
    x = _x(shape, et)
    y = ExecutionSession(str(lib), num_threads=threads).run([x])[0]
    np.testing.assert_array_equal(y, x.transpose(perm))


@pytest.mark.parametrize("shape, perm", [([1, 32, 32, 64], [0, 3, 1, 2]),
                                         ([1, 32, 16, 32], [0, 2, 3, 1])])
def test_relu_fused_into_the_transpose(tmp_path, shape, perm):
    lib = onnx_mlir_py.compile(_model(shape, perm, T.FLOAT, relu=True), tmp_path / "r.so",
                               opt_level=3)
    x = _x(shape, T.FLOAT)
    for threads in (1, 2):
        y = ExecutionSession(str(lib), num_threads=threads).run([x])[0]
        np.testing.assert_array_equal(y, np.maximum(x.transpose(perm), 0))


def _taken(text: str) -> list:
    with make_context():
        m = ir.Module.parse(text)
        return [inner_loops(op) for op in walk_ops(m.operation, ("linalg.transpose",))]


def _transpose_fn(shape, perm, et="f32"):
    out = [shape[p] for p in perm]
    ts = lambda s: "tensor<" + "x".join(map(str, s)) + f"x{et}>"   # noqa: E731
    return (f"func.func @f(%x: {ts(shape)}) -> {ts(out)} {{\n"
            f"  %0 = tensor.empty() : {ts(out)}\n"
            f"  %t = linalg.transpose ins(%x : {ts(shape)}) outs(%0 : {ts(out)}) "
            f"permutation = {perm}\n  return %t : {ts(out)}\n}}")


def test_which_transposes_it_takes():
    """The output's innermost loop j and the input's innermost loop i, both
    whole multiples of 16 and 32-bit; not when the innermost dim stays, nor
    partial blocks, nor other element types."""
    assert _taken(_transpose_fn([1, 112, 112, 64], [0, 3, 1, 2])) == [(1, 3)]
    assert _taken(_transpose_fn([1, 64, 32, 48], [0, 2, 3, 1])) == [(2, 3)]
    assert _taken(_transpose_fn([2, 16, 32, 64], [0, 2, 1, 3])) == [None]     # inner dim kept
    assert _taken(_transpose_fn([1, 64, 56, 56], [0, 2, 3, 1])) == [None]     # W = 56
    assert _taken(_transpose_fn([1, 64, 32, 32], [0, 2, 3, 1], "f16")) == [None]
    assert _taken(_transpose_fn([1, 64, 32, 32], [0, 2, 3, 1], "i8")) == [None]
