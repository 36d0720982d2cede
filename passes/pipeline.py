"""The compiler's passes, by name (``compiler.run_pipeline`` orders them).

    import (importer/)  ->  EmitONNXBasic
    expand-functions (only when lowering: ops without a lowering -> ONNX function bodies)
    ONNX_IR_PIPELINE: verify-mlir, verify-onnx, shape-inference,
      canonicalize-onnx, verify-mlir, verify-onnx         ->  EmitONNXIR
    optimize-onnx (-O2, -O3), [profile-nodes], lower-to-linalg, verify-mlir ->  EmitMLIR
    (then the -O3 tensor passes of passes/optimize, [profile-resolve], and codegen/)

``PASSES`` maps the pass names used by ``python -m onnx_mlir_py.opt`` (and
the lit tests) to functions ``module -> None``; a pass with options (the -O3
steps, ``options`` attribute: their names) takes them as keywords, given in
:func:`run_passes` as ``"NAME=KEY=VALUE,KEY=VALUE"``.
"""
from __future__ import annotations

from typing import Callable

import mlir.ir as ir

from onnx_mlir_py.timings import Timings
from onnx_mlir_py.passes.canonicalize import canonicalize_onnx
from onnx_mlir_py.passes.diagnostics import verify_mlir
from onnx_mlir_py.passes.expand_functions import expand_functions
from onnx_mlir_py.passes.instrument import instrument_nodes, resolve_profile
from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
from onnx_mlir_py.passes.optimize import PASSES as O3_PASSES
from onnx_mlir_py.passes.optimize_onnx import REWRITES, optimize_onnx, run_rewrite
from onnx_mlir_py.passes.sequence_to_tensors import sequence_to_tensors
from onnx_mlir_py.passes.shape_inference import infer_shapes
from onnx_mlir_py.passes.verify_onnx import verify_onnx

PASSES: dict[str, Callable[[ir.Module], None]] = {
    "expand-functions": expand_functions,
    "verify-mlir": verify_mlir,
    "verify-onnx": verify_onnx,
    "shape-inference": infer_shapes,
    "canonicalize-onnx": canonicalize_onnx,
    # ONNX-level graph rewrites (-O2/-O3): all of them, and each one alone
    "optimize-onnx": optimize_onnx,
    **{name: (lambda m, _n=name: run_rewrite(_n, m)) for name in REWRITES},
    # compile-time sequences -> tensors (then dead sequence ops go and the
    # now more static consumers are re-inferred)
    "sequence-to-tensors": lambda m: (sequence_to_tensors(m) and
                                      (canonicalize_onnx(m), infer_shapes(m))) and None,
    "lower-to-linalg": lower_to_linalg,
    # --profile: time hooks around each node (before lowering), resolved before codegen
    "profile-nodes": instrument_nodes,
    "profile-resolve": resolve_profile,
    # the tensor-level -O3 pipeline (passes/optimize) and each of its steps
    **O3_PASSES,
}

ONNX_IR_PIPELINE = ["verify-mlir", "verify-onnx", "shape-inference",
                    "canonicalize-onnx", "verify-mlir", "verify-onnx"]


def run_passes(module: ir.Module, names: list[str], timings: Timings | None = None) -> None:
    """Run the named passes (``NAME`` or ``NAME=KEY=VALUE,...``) in order;
    each adds its time to ``timings``."""
    timings = Timings() if timings is None else timings
    for item in names:
        name, options = pass_options(item)
        with timings.phase(name), module.context, ir.Location.unknown():
            PASSES[name](module, **options)


def pass_options(item: str) -> tuple[str, dict[str, str]]:
    """``"NAME=K=V,K=V"`` -> (NAME, {K: V}); raises CompileError naming the
    pass for options it does not take or a malformed list."""
    from onnx_mlir_py.errors import CompileError
    name, _, text = item.partition("=")
    if not text:
        return name, {}
    options = dict(kv.partition("=")[::2] for kv in text.split(","))
    allowed = getattr(PASSES[name], "options", ())
    bad = [k for k, v in options.items() if k not in allowed or not v]
    if bad:
        raise CompileError(f"pass {name}: option {bad[0]!r} is not KEY=VALUE of "
                           f"{', '.join(allowed) or 'no options'}")
    return name, options


def to_onnx_ir(module: ir.Module, timings: Timings | None = None) -> None:
    run_passes(module, ONNX_IR_PIPELINE, timings)
