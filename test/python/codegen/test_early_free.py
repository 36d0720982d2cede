"""codegen/early_free.py: each buffer freed after its last use (views and
calls followed; escapes left alone), and models that reuse the memory of
freed intermediates still match onnxruntime."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlir.ir as ir

import onnx_mlir_py
from onnx_mlir_py.codegen.early_free import free_after_last_use
from onnx_mlir_py.context import make_context
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match, reference


def _run(text: str) -> tuple[int, list[str]]:
    """(moved, the ops of @f's body as names, deallocs with their operand)."""
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        n = free_after_last_use(m.operation)
        assert m.operation.verify()
        body = m.body.operations[-1].regions[0].blocks[0]
        ops = []
        for op in body.operations:
            op = op.operation
            if op.name == "memref.dealloc":
                ops.append("free " + op.operands[0].get_name())
            elif op.name == "func.call":
                ops.append("call @" + str(op.attributes["callee"]).lstrip("@"))
            else:
                ops.append(op.name)
        return n, ops


DECLS = """
func.func private @k(memref<16xf32>, memref<16xf32>)
func.func private @k2(memref<4x4xf32>)
func.func private @chunk(memref<16xf32>) -> memref<16xf32>
"""


def test_freed_after_the_last_use_through_views():
    n, ops = _run(DECLS + """
func.func @f(%x: memref<16xf32>, %y: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  func.call @k(%x, %a) : (memref<16xf32>, memref<16xf32>) -> ()
  %v = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  func.call @k2(%v) : (memref<4x4xf32>) -> ()
  %b = memref.alloc() : memref<16xf32>
  func.call @k(%x, %b) : (memref<16xf32>, memref<16xf32>) -> ()
  func.call @k(%b, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}""")
    assert n == 2
    assert ops == ["memref.alloc", "call @k", "memref.expand_shape", "call @k2", "free %alloc",
                   "memref.alloc", "call @k", "call @k", "free %alloc_0", "func.return"]


def test_a_call_result_may_be_the_buffer():
    """A chunk of the entry returns a memref: it may be the argument's
    buffer, so its uses count."""
    n, ops = _run(DECLS + """
func.func @f(%x: memref<16xf32>, %y: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %r = func.call @chunk(%a) : (memref<16xf32>) -> memref<16xf32>
  func.call @k(%x, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  func.call @k(%r, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  func.call @k(%x, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}""")
    assert ops.index("free %alloc") == 4, ops     # right after the call that reads %r
    assert n == 1


def test_uses_in_loops_count_at_the_loop():
    n, ops = _run(DECLS + """
func.func @f(%x: memref<16xf32>, %y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      func.call @k(%a, %y) : (memref<16xf32>, memref<16xf32>) -> ()
    }
  }
  func.call @k(%x, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}""")
    assert n == 1 and ops[ops.index("scf.for") + 1] == "free %alloc", ops


@pytest.mark.parametrize("escape", [
    "%p = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index",
    "%m = memref.alloc() : memref<memref<16xf32>>\n  memref.store %a, %m[] : memref<memref<16xf32>>",
    "%c = memref.cast %a : memref<16xf32> to memref<?xf32>\n"
    "  %s = scf.if %t -> memref<?xf32> { scf.yield %c : memref<?xf32> } "
    "else { scf.yield %c : memref<?xf32> }",
])
def test_an_escaping_buffer_stays(escape):
    n, ops = _run(DECLS + f"""
func.func @f(%x: memref<16xf32>, %y: memref<16xf32>, %t: i1) {{
  %a = memref.alloc() : memref<16xf32>
  {escape}
  func.call @k(%x, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}}""")
    assert n == 0 and ops[-2] == "free %alloc", ops


def _chain_model() -> onnx.ModelProto:
    """Convs and residual adds whose intermediates die at different points
    (a buffer read again three layers later must not be reused early)."""
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    prev, keep = "x", "x"
    for i in range(6):
        w = numpy_helper.from_array((rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32),
                                    f"w{i}")
        b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), f"b{i}")
        inits += [w, b]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1] * 4))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        prev = f"r{i}"
        if i % 3 == 2:
            nodes.append(helper.make_node("Add", [prev, keep], [f"s{i}"]))
            prev = keep = f"s{i}"
    nodes.append(helper.make_node("Add", [prev, "r0"], ["y"]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [1, 8, 20, 20])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 20, 20])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("opt", [0, 3])
def test_model_with_early_frees_matches_onnxruntime(tmp_path, opt):
    m = _chain_model()
    lib = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=opt)
    x = np.random.default_rng(0).standard_normal((1, 8, 20, 20)).astype(np.float32)
    want = reference(m, {"x": x}, "onnxruntime")
    for threads in (1, 2):
        s = ExecutionSession(lib, num_threads=threads)
        for _ in range(3):      # reused memory across runs too
            assert_match(s.run([x]), want, rtol=1e-4, atol=1e-4)
