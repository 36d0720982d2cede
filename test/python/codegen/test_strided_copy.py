"""codegen/strided_copy.py: a copy into or out of a subview stays a
memref.copy (llvm.memcpy) when the subview is one contiguous run (a batch-1
Concat's part along the channels), and becomes loops otherwise (a batch-2
Concat's part, a slice inside a row). Each case compiled at -O0 and -O3 and
checked against onnxruntime."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import mlir.ir as ir

from onnx_mlir_py.codegen.strided_copy import _contiguous, _strided


@pytest.mark.parametrize("text, contiguous", [
    ("memref<1x128x40x40xf32, strided<[409600, 1600, 40, 1], offset: 204800>>", True),
    ("memref<1x1x40xf32, strided<[99, 7, 1], offset: 3>>", True),
    ("memref<2x128x40x40xf32, strided<[409600, 1600, 40, 1], offset: 204800>>", False),
    ("memref<1x128x40x20xf32, strided<[204800, 1600, 40, 1]>>", False),
    ("memref<40x40xf32, strided<[1, 40]>>", False),
    ("memref<?x40xf32, strided<[40, 1]>>", False),
])
def test_contiguous(text, contiguous):
    with ir.Context():
        t = ir.MemRefType(ir.Type.parse(text))
        assert _contiguous(t) == contiguous
        assert _strided(t) != contiguous


def _concat_model(batch: int):
    """Two parts that are also used elsewhere (so each is copied into the
    concat's buffer), concatenated along the channels."""
    shape = [batch, 8, 5, 7]
    nodes = [h.make_node("Relu", ["x"], ["rx"]), h.make_node("Neg", ["y"], ["ny"]),
             h.make_node("Concat", ["rx", "ny"], ["z"], axis=1),
             h.make_node("Add", ["rx", "ny"], ["s"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, TP.FLOAT, shape) for n in "xy"],
                     [h.make_tensor_value_info("z", TP.FLOAT, None),
                      h.make_tensor_value_info("s", TP.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("opt", [0, 3])
def test_concat_copies_match_onnxruntime(batch, opt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import assert_match, reference
    m = _concat_model(batch)
    rng = np.random.default_rng(batch + opt)
    feeds = {n: rng.standard_normal([batch, 8, 5, 7]).astype(np.float32) for n in "xy"}
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=opt)
        got = ExecutionSession(so).run([feeds["x"], feeds["y"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=0, atol=0)


def test_batch1_concat_copy_is_memcpy():
    """No lane-by-lane gather / scatter loop for a batch-1 Concat's parts."""
    import onnx_mlir_py
    with tempfile.TemporaryDirectory() as d:
        path = onnx_mlir_py.compile(_concat_model(1), output=os.path.join(d, "m.ll"),
                                    opt_level=3, emit="EmitLLVMIR")
        text = open(path).read()
    assert "llvm.memcpy" in text
    assert "masked.gather" not in text and "masked.scatter" not in text


@pytest.mark.parametrize("a, b, start", [
    # a KV-cache Concat's past part: rows of 16 floats, the past length dynamic
    ("memref<1x4x?x16xf32>", "memref<1x4x?x16xf32, strided<[?, ?, 16, 1]>>", 3),
    ("memref<2x3x8x4xf32, strided<[192, 64, 8, 1]>>", "memref<2x3x8x4xf32>", None),  # 4 of 8
    ("memref<2x3x4x4xf32, strided<[96, 32, 4, 1]>>", "memref<2x3x4x4xf32>", 2),
    ("memref<5x7xf32, strided<[1, 5]>>", "memref<5x7xf32>", None),
    ("memref<3x15xf32, strided<[16, 1]>>", "memref<3x15xf32>", None),         # 60 bytes
    ("memref<3x16xi1, strided<[17, 1]>>", "memref<3x16xi1>", None),
])
def test_run_start(a, b, start):
    from onnx_mlir_py.codegen.strided_copy import _run_start
    with ir.Context():
        assert _run_start(ir.MemRefType(ir.Type.parse(a)), ir.MemRefType(ir.Type.parse(b))) == start


def _kv_concat_model():
    """GPT-2's present = Concat(past, new) along a dynamic past length."""
    nodes = [h.make_node("Relu", ["k"], ["rk"]),
             h.make_node("Concat", ["past", "rk"], ["present"], axis=2),
             h.make_node("Softmax", ["present"], ["y"], axis=-1)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("past", TP.FLOAT, [1, 4, "P", 16]),
                                  h.make_tensor_value_info("k", TP.FLOAT, [1, 4, 1, 16])],
                     [h.make_tensor_value_info("present", TP.FLOAT, None),
                      h.make_tensor_value_info("y", TP.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("opt", [0, 3])
def test_kv_concat_rows_match_onnxruntime(opt):
    """The past part's rows copied one memcpy each, at several past lengths
    (0: no rows)."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import assert_match, reference
    m = _kv_concat_model()
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=opt)
        sess = ExecutionSession(so)
        for past in (0, 1, 5, 33):
            rng = np.random.default_rng(past)
            feeds = {"past": rng.standard_normal([1, 4, past, 16]).astype(np.float32),
                     "k": rng.standard_normal([1, 4, 1, 16]).astype(np.float32)}
            got = sess.run([feeds["past"], feeds["k"]])
            ref = reference(m, feeds, "onnxruntime")
            assert_match(got[:1], ref[:1], rtol=0, atol=0)        # the copy: exact
            assert_match(got[1:], ref[1:], rtol=1e-5, atol=1e-6)


def test_kv_concat_rows_are_memcpy():
    import onnx_mlir_py
    with tempfile.TemporaryDirectory() as d:
        path = onnx_mlir_py.compile(_kv_concat_model(), output=os.path.join(d, "m.ll"),
                                    opt_level=3, emit="EmitLLVMIR")
        text = open(path).read()
    assert "llvm.memcpy" in text
