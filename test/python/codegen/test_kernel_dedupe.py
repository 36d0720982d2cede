"""Each kernel compiled once (#29): codegen/outline_loops.py moves the entry's
serial loop nests into functions and codegen/dedupe.py merges the outlined
functions (serial and parallel loop bodies) that are the same function.

The IR tests check what merges and what must not: bodies that differ only
in the global they read (a weight, passed as an argument) merge; bodies
that differ in an inline constant or a shape do not. The model tests run
merged kernels against onnxruntime: a wrong merge (one conv's weights or
constants used for another) gives wrong numbers."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import mlir.ir as ir

from onnx_mlir_py.codegen import dedupe, llvm as codegen_llvm
from onnx_mlir_py.codegen.dedupe import merge_identical_functions
from onnx_mlir_py.codegen.outline_loops import PREFIX, outline_serial_loops
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.testing.check import assert_match, reference

# four loop nests: @g0 / @g1 read through the same body (different globals),
# the third adds another inline constant, the fourth has another trip count
SRC = """
memref.global "private" constant @g0 : memref<8xf32> = dense<1.0>
memref.global "private" constant @g1 : memref<8xf32> = dense<2.0>
func.func @main_graph(%out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %k1 = arith.constant 1.5 : f32
  %k2 = arith.constant 2.5 : f32
  %w0 = memref.get_global @g0 : memref<8xf32>
  %w1 = memref.get_global @g1 : memref<8xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %w0[%j] : memref<8xf32>
      %y = arith.addf %v, %k1 : f32
      memref.store %y, %out[%i, %j] : memref<4x8xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %w1[%j] : memref<8xf32>
      %y = arith.addf %v, %k1 : f32
      memref.store %y, %out[%i, %j] : memref<4x8xf32>
    }
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %w1[%j] : memref<8xf32>
      %y = arith.addf %v, %k2 : f32
      memref.store %y, %out[%i, %j] : memref<4x8xf32>
    }
  }
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %w1[%j] : memref<8xf32>
      %y = arith.addf %v, %k1 : f32
      memref.store %y, %out[%i, %j] : memref<4x8xf32>
    }
  }
  return
}
"""


def _funcs(module, prefix):
    return sorted(ir.StringAttr(op.operation.attributes["sym_name"]).value
                  for op in module.body.operations
                  if op.operation.name == "func.func"
                  and ir.StringAttr(op.operation.attributes["sym_name"]).value.startswith(prefix))


def _callees(module):
    return [ir.FlatSymbolRefAttr(c.attributes["callee"]).value
            for c in walk_ops(module, "func.call")]


def test_outline_then_merge_keeps_what_differs():
    with make_context():
        m = ir.Module.parse(SRC)
        assert outline_serial_loops(m) == 4
        assert m.operation.verify()
        assert not walk_ops(_entry(m), "scf.for"), "the loops left the entry"
        assert merge_identical_functions(m, PREFIX) == 1     # only @g0 / @g1 merge
        assert m.operation.verify()
        kept = _funcs(m, PREFIX)
        assert len(kept) == 3
        calls = _callees(m)
        assert len(calls) == 4 and calls[0] == calls[1] and len(set(calls)) == 3
        assert set(calls) == set(kept)


@pytest.mark.parametrize("chunked", [False, True])
def test_merged_loops_stay_calls_in_a_chunked_module(chunked):
    """In a module cut into chunks (a long entry, codegen/bufferize_chunks.py)
    a kept function that stands for merged copies is ``noinline`` (LLVM
    copied the loop back into every call: a 20,000-node chain at -O2 sent
    20,000 loop nests through opt / llc); elsewhere nothing is added."""
    from onnx_mlir_py.codegen.bufferize_chunks import PREFIX as CHUNK_PREFIX
    src = SRC + (f"func.func private @{CHUNK_PREFIX}0()\n" if chunked else "")
    with make_context():
        m = ir.Module.parse(src)
        outline_serial_loops(m)
        assert merge_identical_functions(m, PREFIX) == 1
        assert m.operation.verify()
        calls = _callees(m)
        shared = calls[0]
        assert calls.count(shared) == 2
        for op in m.body.operations:
            name = ir.StringAttr(op.operation.attributes["sym_name"]).value
            if not name.startswith(PREFIX):
                continue
            attr = op.operation.attributes["passthrough"] \
                if "passthrough" in op.operation.attributes else None
            if chunked and name == shared:
                assert str(attr) == '["noinline"]', name
            else:
                assert attr is None, (name, attr)


def _entry(m):
    return next(op.operation for op in m.body.operations
                if ir.StringAttr(op.operation.attributes["sym_name"]).value == "main_graph")


def test_loop_with_results_stays():
    src = """
func.func @main_graph(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> f32 {
    %v = memref.load %a[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  return %s : f32
}
"""
    with make_context():
        m = ir.Module.parse(src)
        assert outline_serial_loops(m) == 0
        assert len(walk_ops(m, "scf.for")) == 1


def _conv_stack(n_layers=3, ch=16, hw=20, seed=0):
    """``n_layers`` convs of one shape (different weights) with Tanh, and
    Adds of small inline constants: two with the same constant, one other."""
    rng = np.random.default_rng(seed)
    nodes, inits, cur = [], [], "x"
    for i in range(n_layers):
        inits.append(nh.from_array((rng.standard_normal((ch, ch, 3, 3)) * 0.2)
                                   .astype(np.float32), f"w{i}"))
        inits.append(nh.from_array(rng.standard_normal(ch).astype(np.float32), f"b{i}"))
        nodes += [h.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  h.make_node("Tanh", [f"c{i}"], [f"t{i}"])]
        cur = f"t{i}"
    same = rng.standard_normal((1, 1, 1, hw)).astype(np.float32)
    other = rng.standard_normal((1, 1, 1, hw)).astype(np.float32)
    for i, k in enumerate([same, same, other]):
        inits.append(nh.from_array(k, f"k{i}"))
        nodes.append(h.make_node("Add", [cur, f"k{i}"], [f"a{i}"]))
        cur = f"a{i}"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, ch, hw, hw])],
                     [h.make_tensor_value_info(cur, TP.FLOAT, [1, ch, hw, hw])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    return m, {"x": rng.standard_normal((1, ch, hw, hw)).astype(np.float32)}


@pytest.mark.parametrize("threads", [1, 2])
def test_merged_kernels_match_onnxruntime(tmp_path, monkeypatch, threads):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    dropped = []
    real = dedupe.merge_identical_functions

    def spy(module, prefix):
        n = real(module, prefix)
        dropped.append((prefix, n))
        return n
    monkeypatch.setattr(codegen_llvm, "merge_identical_functions", spy)
    real_kernels = codegen_llvm.outline_kernels

    def spy_kernels(module, entry):
        n = real_kernels(module, entry)
        dropped.append(("kernels", n[1]))
        return n
    monkeypatch.setattr(codegen_llvm, "outline_kernels", spy_kernels)
    m, feeds = _conv_stack()
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    # the repeated convs' kernels, merged as tensor-level kernels
    # (codegen/kernel_functions.py) or as loop bodies
    assert sum(n for _, n in dropped) >= 2, dropped
    got = ExecutionSession(so, num_threads=threads).run([feeds["x"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-5)


def test_only_functions_of_a_shared_type_are_compared(monkeypatch):
    """A function whose type no other outlined function has cannot be the
    same as another: it is not printed to be compared (#29), and the ones
    that share a type still merge across it."""
    printed = []
    real = ir.Operation.get_asm

    def counted(self, *a, **kw):
        printed.append(ir.StringAttr(self.attributes["sym_name"]).value)
        return real(self, *a, **kw)

    # a fifth loop nest, the only one that writes a 2x8 buffer: its own type
    src = SRC.replace("func.func @main_graph(%out: memref<4x8xf32>) {", """
func.func @main_graph(%out: memref<4x8xf32>) {
  %o2 = memref.alloc() : memref<2x8xf32>
  %x0 = arith.constant 0 : index
  %x1 = arith.constant 1 : index
  %x2 = arith.constant 2 : index
  %half = arith.constant 0.5 : f32
  scf.for %i = %x0 to %x2 step %x1 {
    memref.store %half, %o2[%i, %x0] : memref<2x8xf32>
  }""")
    with make_context():
        m = ir.Module.parse(src)
        assert outline_serial_loops(m) == 5
        funcs = [op.operation for op in m.body.operations
                 if ir.StringAttr(op.operation.attributes["sym_name"]).value.startswith(PREFIX)]
        types = [str(f.attributes["function_type"]) for f in funcs]
        assert dedupe.shared_types(funcs) == {t for t in types if types.count(t) > 1}
        lone = [ir.StringAttr(f.attributes["sym_name"]).value
                for f, t in zip(funcs, types) if types.count(t) == 1]
        assert len(lone) == 1
        monkeypatch.setattr(ir.Operation, "get_asm", counted)
        assert merge_identical_functions(m, PREFIX) == 1     # still @g0 / @g1
        monkeypatch.undo()
        assert m.operation.verify()
        assert lone[0] not in printed and len(printed) == 4
