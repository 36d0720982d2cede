"""MLIR's pass manager run through the C API by ctypes (codegen/mlir_capi.py,
#29): without the GIL, its errors as the bindings' MLIRError reports them.

What can go wrong: a failed run reported as a success (or its errors
printed to stderr instead of raised); a diagnostic handler that outlives
the run (a later, unrelated error swallowed); the GIL still held (the
LLVM pool's threads stall); a reused pass manager that gives another
module than a fresh one."""
from __future__ import annotations

import threading
import time

import mlir.ir as ir
import pytest
from mlir.passmanager import PassManager

from onnx_mlir_py.codegen import mlir_capi
from onnx_mlir_py.codegen.passes import reused_pass_managers, run_pipeline
from onnx_mlir_py.context import make_context
from onnx_mlir_py.errors import CompileError

pytestmark = pytest.mark.skipif(not mlir_capi.available(), reason="no MLIR C API library")

# a loop that yields a new tensor: one-shot bufferization refuses it when
# allocations may not be returned from loops (an error with a note)
_BAD_LOOP = """
func.func @f(%t: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %t) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
"""
_REFUSING = "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops=false}"


def _adds(n: int) -> str:
    body = "\n".join(f"  %v{i + 1} = arith.addf %v{i}, %v{i} : f32" for i in range(n))
    return f"func.func @g(%v0: f32) -> f32 {{\n{body}\n  return %v{n} : f32\n}}\n"


def test_a_failed_run_raises_its_errors_as_the_bindings_do(capfd):
    ctx = make_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.parse(_BAD_LOOP)
        with pytest.raises(ir.MLIRError) as theirs:
            PassManager.parse(f"builtin.module({_REFUSING})").run(m.operation)
        m = ir.Module.parse(_BAD_LOOP)
        found = mlir_capi.run_pass_manager(PassManager.parse(f"builtin.module({_REFUSING})"),
                                           m.operation)
    assert found is not None and len(found) == 2, found
    assert found[0].startswith("error: ") and "not equivalent" in found[0], found
    assert found[1].startswith(" note: ") and "scf.yield" in found[1], found
    for line in found:          # the same lines as the bindings' message
        assert line.strip() in str(theirs.value), (line, str(theirs.value))
    assert "not equivalent" not in capfd.readouterr().err      # not printed


def test_run_pipeline_names_the_stage_and_detaches_its_handler():
    ctx = make_context()
    with ctx, ir.Location.unknown():
        m = ir.Module.parse(_BAD_LOOP)
        with pytest.raises(CompileError, match=r"^bufferizing failed: Failure while executing "
                                               r"pass pipeline:\nerror: .*not equivalent"):
            run_pipeline(m, _REFUSING, "bufferizing")
        # the handler is gone: the bindings' own run still reports its error
        m = ir.Module.parse(_BAD_LOOP)
        with pytest.raises(ir.MLIRError, match="not equivalent"):
            PassManager.parse(f"builtin.module({_REFUSING})").run(m.operation)


def test_a_successful_run_gives_the_bindings_module():
    ctx = make_context()
    pipeline = "builtin.module(func.func(canonicalize, cse))"
    with ctx, ir.Location.unknown():
        a, b = ir.Module.parse(_adds(50)), ir.Module.parse(_adds(50))
        PassManager.parse(pipeline).run(a.operation)
        assert mlir_capi.run_pass_manager(PassManager.parse(pipeline), b.operation) is None
        assert str(a) == str(b)


def test_the_run_releases_the_gil():
    """A Python thread counts much faster beside the ctypes run than beside
    the bindings' run of the same pipeline on the same module (which holds
    the GIL: ~15% of its rate beside a sleep, the ctypes run ~90% on a
    quiet machine). Compared pair by pair, each pair run back to back, so
    that a machine loaded by other work (a pytest worker on the other core)
    slows both sides of a pair alike."""
    ctx = make_context()
    ctx.enable_multithreading(False)
    pipeline = "builtin.module(func.func(canonicalize, cse, canonicalize, cse))"
    with ctx, ir.Location.unknown():
        pairs = [(ir.Module.parse(_adds(20000)), ir.Module.parse(_adds(20000))) for _ in range(3)]
        pm = PassManager.parse(pipeline)
    counts, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counts[0] += 1

    def rate(work) -> float:
        before, t0 = counts[0], time.perf_counter()
        work()
        return (counts[0] - before) / (time.perf_counter() - t0)
    t = threading.Thread(target=count)
    t.start()
    ratios = []
    try:
        time.sleep(0.01)
        for theirs, ours in pairs:
            held = rate(lambda: pm.run(theirs.operation))
            released = rate(lambda: mlir_capi.run_pass_manager(pm, ours.operation))
            ratios.append(released / max(held, 1.0))
    finally:
        stop.set()
        t.join()
    assert sorted(ratios)[1] > 2.0, ratios


def test_reused_pass_managers_run_one_parsed_manager_again(monkeypatch):
    from onnx_mlir_py.codegen import passes
    parsed = []
    real = PassManager.parse

    def parse(text, *a, **k):
        parsed.append(text)
        return real(text, *a, **k)
    monkeypatch.setattr(passes.PassManager, "parse", staticmethod(parse))
    ctx = make_context()
    with ctx, ir.Location.unknown():
        fresh = [ir.Module.parse(_adds(30)) for _ in range(3)]
        with reused_pass_managers():
            for m in fresh[:2]:
                run_pipeline(m, "func.func(canonicalize, cse)", "test")
        assert len(parsed) == 1, parsed
        run_pipeline(fresh[2], "func.func(canonicalize, cse)", "test")
        assert len(parsed) == 2, parsed         # outside the block: parsed again
        assert str(fresh[0]) == str(fresh[1]) == str(fresh[2])
