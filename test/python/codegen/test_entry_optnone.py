"""codegen/entry_optnone.py: the entry compiled without LLVM's optimisations
when it has no loop (#29), with the same answers; an entry with a loop
keeps them."""
from __future__ import annotations

import re

import mlir.ir as ir
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.codegen.entry_optnone import entry_without_optimisations, has_loop
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

STRAIGHT = """
llvm.func @main_graph(%a: i64) -> i64 {
  %c = llvm.mlir.constant(1 : i64) : i64
  %s = llvm.add %a, %c : i64
  llvm.return %s : i64
}"""

# an if / else: more blocks, no cycle
DIAMOND = """
llvm.func @main_graph(%a: i64) -> i64 {
  %c = llvm.mlir.constant(1 : i64) : i64
  %p = llvm.icmp "slt" %a, %c : i64
  llvm.cond_br %p, ^bb1, ^bb2
^bb1:
  llvm.br ^bb3(%a : i64)
^bb2:
  llvm.br ^bb3(%c : i64)
^bb3(%r: i64):
  llvm.return %r : i64
}"""

LOOP = """
llvm.func @main_graph(%n: i64) -> i64 {
  %z = llvm.mlir.constant(0 : i64) : i64
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%z : i64)
^bb1(%i: i64):
  %p = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %p, ^bb2, ^bb3
^bb2:
  %j = llvm.add %i, %one : i64
  llvm.br ^bb1(%j : i64)
^bb3:
  llvm.return %i : i64
}"""

# a block that branches to itself
SELF_LOOP = """
llvm.func @main_graph(%n: i64) -> i64 {
  %one = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%n : i64)
^bb1(%i: i64):
  %j = llvm.sub %i, %one : i64
  %p = llvm.icmp "sgt" %j, %one : i64
  llvm.cond_br %p, ^bb1(%j : i64), ^bb2
^bb2:
  llvm.return %j : i64
}"""


@pytest.mark.parametrize("text,loop", [(STRAIGHT, False), (DIAMOND, False), (LOOP, True),
                                       (SELF_LOOP, True)])
def test_has_loop_and_marking(text, loop):
    with ir.Context():
        m = ir.Module.parse(text)
        fn = m.body.operations[0].operation
        assert has_loop(fn) is loop
        assert entry_without_optimisations(m, "main_graph") is (not loop)
        marked = "optimize_none" in fn.attributes and "no_inline" in fn.attributes
        assert marked is (not loop)
        assert m.operation.verify()
        # another name is not the entry
        assert not entry_without_optimisations(m, "other")


def _entry_attributes(ll: str) -> str:
    d = re.search(r"^define [^\n]*@main_graph\([^\n]*?(#\d+) \{$", ll, re.M)
    assert d, "no main_graph definition"
    return re.search(r"^attributes %s = \{([^}]*)\}" % d.group(1), ll, re.M).group(1)


def _conv_model(shape):
    w = nh.from_array(np.random.default_rng(0).standard_normal((8, 3, 3, 3)).astype(np.float32),
                      "w")
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                      h.make_node("Relu", ["c"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_static_model_entry_optnone_same_answers(tmp_path):
    m = _conv_model([1, 3, 16, 16])
    ll = open(onnx_mlir_py.compile(m, tmp_path / "m.ll", emit="EmitLLVMIR", opt_level=3)).read()
    assert "optnone" in _entry_attributes(ll)
    so = onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(ExecutionSession(so).run([x])[0], want, rtol=1e-4, atol=1e-4)


def test_run_time_check_from_an_optnone_entry(tmp_path):
    """A Gather's index check with static shapes: the error still comes back
    as an error, never a signal."""
    g = h.make_graph([h.make_node("Gather", ["x", "i"], ["y"], name="gat", axis=0)], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [4, 3]),
                      h.make_tensor_value_info("i", T.INT64, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    ll = open(onnx_mlir_py.compile(m, tmp_path / "g.ll", emit="EmitLLVMIR", opt_level=3)).read()
    if "optnone" not in _entry_attributes(ll):
        pytest.fail("the static Gather's entry has no loop: expected optnone")
    s = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "g.so", opt_level=3))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(s.run([x, np.array([3, -4], np.int64)])[0], x[[3, 0]])
    with pytest.raises(RuntimeInputError, match=r"node 'gat' \(Gather\): index 4"):
        s.run([x, np.array([4, 0], np.int64)])
