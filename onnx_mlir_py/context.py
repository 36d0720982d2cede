"""One MLIR context with the ONNX dialects loaded (IRDL, generated)."""
from __future__ import annotations

from functools import lru_cache

import mlir.ir as ir
from mlir.dialects import irdl

from onnx_mlir_py.dialects.onnx.schema import IRDL_FILE


@lru_cache(maxsize=1)
def _irdl_text() -> str:
    return IRDL_FILE.read_text()


def make_context() -> ir.Context:
    """A fresh context with ``onnx``, ``onnx_ml``, ``onnx_training`` and
    ``onnx_preview`` registered, plus the upstream dialects we emit."""
    from onnx_mlir_py.dialects.upstream import register
    register()      # the modules of the upstream dialects the wheel lacks (amx, x86vector)
    ctx = ir.Context()
    # the per-function passes run on the functions in parallel (codegen's
    # pipelines nest them under func.func) on the context's thread pool, as
    # many threads as codegen may use cores ($ONNX_MLIR_PY_CODEGEN_JOBS)
    from onnx_mlir_py.tool_process import split_jobs
    if split_jobs() < 2:
        ctx.enable_multithreading(False)
    with ctx, ir.Location.unknown():
        irdl.load_dialects(ir.Module.parse(_irdl_text()))
    return ctx
