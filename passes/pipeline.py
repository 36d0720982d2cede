"""The compiler's phases, by name, in order.

    import (importer/)  ->  EmitONNXBasic
    verify-mlir, verify-onnx, shape-inference, canonicalize-onnx,
    verify-onnx             ->  EmitONNXIR
    (lowering and codegen follow in passes/onnx_to_linalg and backend/)

``PASSES`` maps the pass names used by ``python -m onnx_mlir_py.opt`` (and
the lit tests) to functions ``module -> None``.
"""
from __future__ import annotations

import time
from typing import Callable

import mlir.ir as ir

from .canonicalize import canonicalize_onnx
from .diagnostics import verify_mlir
from .shape_inference import infer_shapes
from .verify_onnx import verify_onnx

PASSES: dict[str, Callable[[ir.Module], None]] = {
    "verify-mlir": verify_mlir,
    "verify-onnx": verify_onnx,
    "shape-inference": infer_shapes,
    "canonicalize-onnx": canonicalize_onnx,
    "lower-to-linalg": lambda m: __import__("onnx_mlir_py.passes.onnx_to_linalg", fromlist=["x"]).lower_to_linalg(m),
}
# ONNX-level graph rewrites (-O2/-O3): all of them, and each one alone.
from .optimize_onnx import REWRITES as _REWRITES, optimize_onnx as _optimize_onnx, run_rewrite as _run_rewrite  # noqa: E402
PASSES["optimize-onnx"] = _optimize_onnx
PASSES.update({name: (lambda m, _n=name: _run_rewrite(_n, m)) for name in _REWRITES})
# Tensor-level -O3 pipeline (passes/optimize) and each of its steps.
from .optimize import PASSES as _O3_PASSES  # noqa: E402
PASSES.update(_O3_PASSES)

ONNX_IR_PIPELINE = ["verify-mlir", "verify-onnx", "shape-inference",
                    "canonicalize-onnx", "verify-mlir", "verify-onnx"]


def run_passes(module: ir.Module, names: list[str], timings: dict | None = None) -> None:
    for name in names:
        t0 = time.perf_counter()
        with module.context, ir.Location.unknown():
            PASSES[name](module)
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


def to_onnx_ir(module: ir.Module, timings: dict | None = None) -> None:
    run_passes(module, ONNX_IR_PIPELINE, timings)
