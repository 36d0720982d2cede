"""Own-op -O3 schedules (passes/optimize/schedule.py,
``apply_to_ops(own_op_only=True)``): the elementwise step's ops of equal
schedule text run as one batch (one interpreter run over all of them, a
``transform.foreach``), a schedule of one op alone is rooted at the op, so
its match walks one op instead of the whole module (a run per op over the
whole module was quadratic in the model: a 10,000-node chain spent 22 s
there, issue #29). The IR they produce is the same as with one run per op
with the module as root. A batch that fails on one op leaves that op as a
single run would and runs the ops after it one by one."""
from __future__ import annotations

import os
import sys

import mlir.ir as ir

from onnx_mlir_py.importer import import_model
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.target import target_for

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import compile_time  # noqa: E402  (the compile-time benchmark's chain model)


def _vectorized(monkeypatch, own_op_only: bool | None, threads: bool, batches: bool = True):
    """The printed module of a 60-node chain after fusion and the elementwise
    step, and the payload roots its interpreter runs got. ``own_op_only``
    None: as vectorize_elementwise asks; else forced. ``batches`` False:
    one run per op (no batch of equal schedules)."""
    from mlir.dialects.transform import interpreter

    from onnx_mlir_py.passes.optimize import elementwise, schedule
    from onnx_mlir_py.passes.optimize.fuse_elementwise import fuse_elementwise
    roots = []
    real_apply = interpreter.apply_named_sequence

    class Recorder:
        @staticmethod
        def apply_named_sequence(root, *args):
            roots.append(root.name)
            return real_apply(root, *args)
    monkeypatch.setattr(schedule, "interpreter", Recorder)
    if not batches:
        monkeypatch.setattr(schedule, "_apply_batches", lambda module, tagged: (tagged, 0))
    if own_op_only is not None:
        real = schedule.apply_to_ops
        monkeypatch.setattr(elementwise, "apply_to_ops",
                            lambda m, ops, body, **kw: real(m, ops, body,
                                                            own_op_only=own_op_only))
    module = import_model(compile_time.chain_model(60))
    to_onnx_ir(module)
    lower_to_linalg(module)
    with module.context, ir.Location.unknown():
        fuse_elementwise(module)
        groups = len(walk_ops(module.operation, "linalg.generic"))
        done = elementwise.vectorize_elementwise(module, target_for("x86-64-v4"), threads)
    assert done == groups > 1            # every fused group got its schedule
    return str(module), roots


def test_elementwise_runs_are_rooted_at_their_op(monkeypatch):
    _, roots = _vectorized(monkeypatch, None, threads=True, batches=False)
    assert roots and set(roots) == {"linalg.generic"}, set(roots)


def test_equal_schedules_run_as_one_batch(monkeypatch):
    _, batched = _vectorized(monkeypatch, None, threads=True)
    _, single = _vectorized(monkeypatch, None, threads=True, batches=False)   # patches on
    # the chain's fused groups share one or two schedule texts (the last
    # group is shorter): fewer runs, the batches rooted at the module
    assert 1 <= len(batched) <= 2 < len(single), (batched, len(single))
    assert "builtin.module" in batched


def test_rooted_runs_give_the_module_rooted_ir(monkeypatch):
    for threads in (False, True):
        batched, _ = _vectorized(monkeypatch, True, threads)
        rooted, r1 = _vectorized(monkeypatch, True, threads, batches=False)
        whole, r2 = _vectorized(monkeypatch, False, threads, batches=False)
        assert set(r1) == {"linalg.generic"} and set(r2) == {"builtin.module"}
        assert "vector.transfer_write" in rooted
        assert batched == rooted == whole
        monkeypatch.undo()


# three ops of one schedule text: tiled [1, 0] and vectorized; the middle
# one has one loop, so its tiling fails (two tile sizes for one loop)
_BATCH_IR = """
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m1 = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<2x16xf32>)
    -> (tensor<4x8xf32>, tensor<8xf32>, tensor<2x16xf32>) {
  %0 = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%a : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#m1, #m1], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%b : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<2x16xf32>) outs(%c : tensor<2x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<2x16xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<8xf32>, tensor<2x16xf32>
}
"""

_TILE_VECTORIZE = """
    %t, %l = transform.structured.tile_using_for %op tile_sizes [1, 0]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.structured.vectorize %t : !transform.any_op
"""


def test_a_failed_batch_runs_the_rest_one_by_one():
    """The batch stops at the op whose schedule fails; the ops before it
    are done, the ops after it get their own runs, and no tag is left."""
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import schedule
    with make_context(), ir.Location.unknown():
        m = ir.Module.parse(_BATCH_IR)
        ops = walk_ops(m.operation, "linalg.generic")
        done = schedule.apply_to_ops(m, ops, lambda op: _TILE_VECTORIZE, own_op_only=True)
        text = str(m)
    assert done == 2
    # the first and the last op vectorized in rows, the middle one untouched
    assert "vector<1x8xf32>" in text and "vector<1x16xf32>" in text
    assert len(walk_ops(m.operation, "linalg.generic")) == 1
    assert schedule.TAG not in text


_LOOP_IR = """
func.func @f(%t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %p = arith.constant 0.0 : f32
  %dead = arith.addf %p, %p : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (tensor<4x8xf32>) {
    %v = vector.transfer_read %t[%i, %c0], %p {in_bounds = [true, true]}
      : tensor<4x8xf32>, vector<1x8xf32>
    %w = vector.transfer_write %v, %acc[%i, %c0] {in_bounds = [true, true]}
      : vector<1x8xf32>, tensor<4x8xf32>
    scf.yield %w : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
"""


def test_vector_cleanup_rewrites_the_loops_only(monkeypatch):
    """cleanup_vectors (apply_to_funcs(on_loops=True)) applies its patterns
    to the function's loops: their unit-dim vectors are cast away, the
    function body itself is not rewritten (the dead op stays, no region
    simplification), and after the -O3 canonicalize the IR is the one the
    patterns applied to the whole function give."""
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes import optimize as O

    def cleaned(on_loops: bool):
        with make_context(), ir.Location.unknown():
            m = ir.Module.parse(_LOOP_IR)
            O.apply_to_funcs(m, O.VECTOR_CLEANUP, on_loops=on_loops)
            text = str(m)
            O._canonicalize(m)
            return text, str(m)

    loops, loops_canon = cleaned(True)
    func, func_canon = cleaned(False)
    for text in (loops, func):
        assert "vector<1x8xf32>" not in text and "vector<8xf32>" in text
    assert "arith.addf" in loops and "arith.addf" not in func
    assert "onnx_mlir_py.sched" not in loops
    assert loops_canon == func_canon
