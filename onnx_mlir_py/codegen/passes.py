"""Running textual MLIR pipelines with clear errors (never a process abort
on *pipeline* errors: the pipeline text is parsed before anything runs).

The module is verified once, after the whole pipeline, not after each of
its passes (the pass manager's default): ResNet-50's codegen pipelines are
~45 passes, and verifying the module after each was 0.5 s of its 2.3-2.6 s
of CPU (#29). A pass that leaves invalid IR is still an error, named by
the pipeline's stage instead of the pass (``ONNX_MLIR_PY_VERIFY_EACH=1``
verifies after each pass again, to find which)."""
from __future__ import annotations

import os
from contextlib import contextmanager

import mlir.ir as ir
from mlir.passmanager import PassManager

from onnx_mlir_py.errors import CompileError

# "1": the pass manager verifies the module after every pass (debugging)
VERIFY_EACH_ENV = "ONNX_MLIR_PY_VERIFY_EACH"


# pipeline text -> its parsed pass manager, inside reused_pass_managers()
_REUSED: dict | None = None


@contextmanager
def reused_pass_managers():
    """Inside the block each pipeline text is parsed once and its pass
    manager run again: parsing a pipeline and the passes' first
    initialization (each ``canonicalize`` gathers every loaded dialect's
    patterns) made a codegen pipeline's run on a small module 0.2-1.8 ms,
    0.1-0.4 ms when run again (measured, Emerald Rapids), and the kernels
    lowered in chunks of their own (codegen/kernel_ahead.py) run ~10
    pipelines a chunk. Dropped when the block ends (a
    pass manager must not outlive its context). One context per block."""
    global _REUSED
    outer = _REUSED
    if outer is None:
        _REUSED = {}
    try:
        yield
    finally:
        if outer is None:
            _REUSED = None


def _pass_manager(text: str, verify_each: bool, stage: str) -> PassManager:
    key = (text, verify_each)
    pm = _REUSED.get(key) if _REUSED is not None else None
    if pm is None:
        try:
            pm = PassManager.parse(text)
        except (ValueError, ir.MLIRError) as e:
            raise CompileError(f"{stage}: bad pass pipeline {text!r}: {e}") from None
        pm.enable_verifier(verify_each)
        if _REUSED is not None:
            _REUSED[key] = pm
    return pm


def run_pipeline(module: ir.Module, pipeline: str, stage: str, verify: bool = True) -> None:
    """Run ``builtin.module(<pipeline>)`` on ``module`` in place, then verify
    it (``verify=False``: not, for a part of a module whose symbols are
    elsewhere; the whole module is verified later)."""
    text = pipeline if pipeline.startswith("builtin.module(") else f"builtin.module({pipeline})"
    with module.context:
        each = os.environ.get(VERIFY_EACH_ENV) == "1"
        pm = _pass_manager(text, each and verify, stage)
        try:
            _run(pm, module.operation)
            if verify and not each and not module.operation.verify():
                raise CompileError(f"{stage} failed: the module it left does not verify")
        except ir.MLIRError as e:
            raise CompileError(f"{stage} failed: {_short(e)}") from None


def _run(pm: PassManager, op) -> None:
    """``pm.run(op)``, without the GIL when MLIR's C API is at hand
    (:mod:`.mlir_capi`: the LLVM pool's threads compile meanwhile); an
    MLIRError as the bindings' on failure."""
    from onnx_mlir_py.codegen import mlir_capi
    if not mlir_capi.available():
        pm.run(op)
        return
    errors = mlir_capi.run_pass_manager(pm, op)
    if errors is not None:
        raise ir.MLIRError("\n".join(["Failure while executing pass pipeline:"] + errors), [])


def _short(e: Exception, limit: int = 3000) -> str:
    s = str(e)
    return s if len(s) <= limit else s[:limit] + " ..."
