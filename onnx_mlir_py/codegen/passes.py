"""Running textual MLIR pipelines with clear errors (never a process abort
on *pipeline* errors: the pipeline text is parsed before anything runs)."""
from __future__ import annotations

import mlir.ir as ir
from mlir.passmanager import PassManager

from onnx_mlir_py.errors import CompileError


def run_pipeline(module: ir.Module, pipeline: str, stage: str) -> None:
    """Run ``builtin.module(<pipeline>)`` on ``module`` in place."""
    text = pipeline if pipeline.startswith("builtin.module(") else f"builtin.module({pipeline})"
    with module.context:
        try:
            pm = PassManager.parse(text)
        except (ValueError, ir.MLIRError) as e:
            raise CompileError(f"{stage}: bad pass pipeline {text!r}: {e}") from None
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            raise CompileError(f"{stage} failed: {_short(e)}") from None


def _short(e: Exception, limit: int = 3000) -> str:
    s = str(e)
    return s if len(s) <= limit else s[:limit] + " ..."
