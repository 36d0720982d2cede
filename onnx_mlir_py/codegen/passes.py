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

import mlir.ir as ir
from mlir.passmanager import PassManager

from onnx_mlir_py.errors import CompileError

# "1": the pass manager verifies the module after every pass (debugging)
VERIFY_EACH_ENV = "ONNX_MLIR_PY_VERIFY_EACH"


def run_pipeline(module: ir.Module, pipeline: str, stage: str, verify: bool = True) -> None:
    """Run ``builtin.module(<pipeline>)`` on ``module`` in place, then verify
    it (``verify=False``: not, for a part of a module whose symbols are
    elsewhere; the whole module is verified later)."""
    text = pipeline if pipeline.startswith("builtin.module(") else f"builtin.module({pipeline})"
    with module.context:
        try:
            pm = PassManager.parse(text)
        except (ValueError, ir.MLIRError) as e:
            raise CompileError(f"{stage}: bad pass pipeline {text!r}: {e}") from None
        each = os.environ.get(VERIFY_EACH_ENV) == "1"
        pm.enable_verifier(each and verify)
        try:
            pm.run(module.operation)
            if verify and not each and not module.operation.verify():
                raise CompileError(f"{stage} failed: the module it left does not verify")
        except ir.MLIRError as e:
            raise CompileError(f"{stage} failed: {_short(e)}") from None


def _short(e: Exception, limit: int = 3000) -> str:
    s = str(e)
    return s if len(s) <= limit else s[:limit] + " ..."
