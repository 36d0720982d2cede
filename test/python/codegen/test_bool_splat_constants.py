"""All-false / all-true bool constants (i1 splats) read back correctly.

MLIR stores an i1 splat as one byte, but the Python bindings' ``np.array(attr)``
unpacks ceil(n / 8) bytes: it read past that byte, so a folded all-false
``Equal`` (then ``Or``-ed into the model output) or a large bool weight came
out with random values, differently from one compile to the next
(``test_greater_equal_bcast_expanded`` in constant mode). See
``onnx_mlir_py/ir_dense.py``.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_mlir_py
from onnx_mlir_py.codegen.weights import _payload
from onnx_mlir_py.dialects.onnx.opview import dense_to_numpy
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np
from onnx_mlir_py.runtime import ExecutionSession

ROUNDS = 50


def _splat(n: int, value: bool) -> ir.DenseElementsAttr:
    t = ir.RankedTensorType.get([n], ir.IntegerType.get_signless(1))
    bits = np.packbits(np.full(n, value), bitorder="little")
    a = ir.DenseElementsAttr.get(bits, type=t)
    assert a.is_splat          # MLIR turns an all-equal bool buffer into a splat
    return a


def _noise(k: int) -> None:
    """Other attributes next to the splat in the context's allocator."""
    t = ir.RankedTensorType.get([256], ir.IntegerType.get_signless(8))
    ir.DenseElementsAttr.get(((np.arange(256) * 37 + k) % 251 + 1).astype(np.uint8), type=t)


def test_bool_splat_to_numpy():
    for r in range(ROUNDS):
        with ir.Context(), ir.Location.unknown():   # a fresh allocator each round
            for n in (9, 60, 1000, 4096):
                for value in (False, True):
                    _noise(r)
                    a = _splat(n, value)
                    _noise(r + 1)
                    np.testing.assert_array_equal(dense_to_numpy(a), np.full(n, value))
                    payload = np.frombuffer(_payload(a), np.uint8)
                    np.testing.assert_array_equal(payload, np.full(n, int(value), np.uint8))
                    module = ir.Module.create()
                    with ir.InsertionPoint(module.body):
                        c = ir.Operation.create("arith.constant", results=[a.type],
                                                attributes={"value": a})
                    np.testing.assert_array_equal(const_np(c.result), np.full(n, value))


def test_bool_splat_non_splat_and_empty():
    rng = np.random.default_rng(0)
    with ir.Context(), ir.Location.unknown():
        for n in (1, 7, 8, 9, 60, 1001):
            x = rng.random(n) < 0.5
            if n > 1:
                x[0], x[-1] = True, False
            t = ir.RankedTensorType.get([n], ir.IntegerType.get_signless(1))
            a = ir.DenseElementsAttr.get(np.packbits(x, bitorder="little"), type=t)
            np.testing.assert_array_equal(dense_to_numpy(a), x)
        t = ir.RankedTensorType.get([0, 3], ir.IntegerType.get_signless(1))
        a = ir.DenseElementsAttr.get(np.zeros(0, np.uint8), type=t)
        assert dense_to_numpy(a).shape == (0, 3)


def _greater_equal_model() -> onnx.ModelProto:
    """GreaterOrEqual as Greater | Equal on initializers (as the expanded
    conformance test): Equal folds to an all-false splat that Or and Not read;
    the outputs (4096 bools each) are constants big enough to become weights."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 1, 16)).astype(np.float32)
    y = rng.standard_normal((16, 16)).astype(np.float32)    # never equal to x
    nodes = [helper.make_node("Greater", ["x", "y"], ["gt"]),
             helper.make_node("Equal", ["x", "y"], ["eq"]),
             helper.make_node("Or", ["gt", "eq"], ["ge"]),
             helper.make_node("Not", ["eq"], ["ne"])]
    out = [helper.make_tensor_value_info(n, TensorProto.BOOL, [16, 16, 16])
           for n in ("ge", "eq", "ne")]
    g = helper.make_graph(nodes, "bool_splat", [], out,
                          [numpy_helper.from_array(x, "x"), numpy_helper.from_array(y, "y")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])


def test_folded_bool_constants_compile(tmp_path):
    m = _greater_equal_model()
    x = numpy_helper.to_array(m.graph.initializer[0])
    y = numpy_helper.to_array(m.graph.initializer[1])
    ge = x >= y
    assert 0 < ge.sum() < ge.size
    want = [ge, np.zeros(ge.shape, bool), np.ones(ge.shape, bool)]
    for i in range(3):
        so = onnx_mlir_py.compile(m, tmp_path / f"ge{i}.so", opt_level=0)
        got = ExecutionSession(so).run([])
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w)
