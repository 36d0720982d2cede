"""The whole pipeline in one call, for the CLI and the Python API.

    import (importer/) -> ONNX IR (passes/pipeline.py) -> lower-to-linalg
    (passes/onnx_to_linalg) -> [optimisation at -O3] -> codegen/ (LLVM, .o, .so)

``compile(model, output=...)`` is the Python face of ``onnx-mlir-py
model.onnx --EmitLib``; ``lower_and_emit`` is the part after ONNX IR that
the CLI shares.
"""
from __future__ import annotations

import os
import sys
import time

import mlir.ir as ir

from .errors import CompileError

EMIT_LEVELS = ("EmitONNXBasic", "EmitONNXIR", "EmitMLIR", "EmitLLVMIR", "EmitObj", "EmitLib")
# onnx-mlir's naming: emit level -> suffix added to the output base name.
SUFFIX = {"EmitONNXBasic": ".onnx.mlir", "EmitONNXIR": ".onnx.mlir", "EmitMLIR": ".onnx.mlir",
          "EmitLLVMIR": ".ll", "EmitObj": ".o", "EmitLib": ".so"}
DEFAULT_OPT_LEVEL = 3


def print_module(module: ir.Module, stream, elide: bool = True) -> None:
    """Printed IR elides large constants; written files keep them, so they
    can be read back (as onnx-mlir's .onnx.mlir files can)."""
    module.operation.print(file=stream, large_elements_limit=16 if elide else None,
                           large_resource_limit=64 if elide else None)


def _phase(timings: dict | None, name: str, t0: float) -> None:
    if timings is not None:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t0


def lower(module: ir.Module, opt_level: int = DEFAULT_OPT_LEVEL,
          timings: dict | None = None, runtime_checks: bool = True) -> None:
    """ONNX IR -> tensor-level upstream MLIR (linalg/tensor/arith/math), in place.
    ``runtime_checks=False`` (UNSAFE) leaves out the run-time checks of the
    generated code (index ranges, dims that must agree, allocation sizes)."""
    from .passes.pipeline import run_passes
    if not runtime_checks:
        from .passes.onnx_to_linalg.builder import NO_CHECKS_ATTR
        with module.context:
            module.operation.attributes[NO_CHECKS_ATTR] = ir.UnitAttr.get()
    if opt_level >= 2: run_passes(module, ["optimize-onnx"], timings)  # noqa: E701 (ONNX graph rewrites)
    run_passes(module, ["lower-to-linalg", "verify-mlir"], timings)


def lower_and_emit(module: ir.Module, emit: str, out: str | None, *,
                   opt_level: int = DEFAULT_OPT_LEVEL, mcpu: str | None = None,
                   march: str | None = None, print_ir: bool = False,
                   timings: dict | None = None, runtime_checks: bool = True) -> str | None:
    """Lower a module in ONNX IR and write ``out`` at the ``emit`` level
    (EmitMLIR, EmitLLVMIR, EmitObj or EmitLib). ``print_ir`` prints the
    textual levels to stdout instead of writing them. Returns the path written."""
    if emit not in EMIT_LEVELS[2:]:
        raise CompileError(f"emit level must be one of {', '.join(EMIT_LEVELS[2:])}, got {emit!r}")
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"opt_level must be 0..3, got {opt_level!r}")
    from . import codegen
    lower(module, opt_level, timings, runtime_checks)
    if emit == "EmitMLIR":
        return _write_text(module, out, print_ir)
    t0 = time.perf_counter()
    mcpu, tt = _optimization(opt_level, mcpu, march, timings)
    if emit == "EmitLLVMIR":
        text = codegen.emit_llvm_ir(module, opt_level, mcpu=mcpu, march=march, tensor_transform=tt)
        _phase(timings, "codegen (LLVM IR)", t0)
        if print_ir:
            sys.stdout.write(text)
            return None
        with open(out, "w") as f:
            f.write(text)
        return out
    if emit == "EmitObj":
        codegen.emit_object(module, out, opt_level, mcpu, march, tensor_transform=tt)
        _phase(timings, "codegen (object)", t0)
        return out
    codegen.emit_library(module, out, opt_level, mcpu, march, tensor_transform=tt)
    from .codegen.link import last_timings
    if timings is not None:
        for k in ("mlir", "translate", "opt", "llc", "link"):
            if k in last_timings:
                timings[f"codegen: {k}"] = last_timings[k]
    return out


def _optimization(opt_level: int, mcpu: str | None, march: str | None, timings: dict | None):
    """(mcpu, tensor_transform) for an opt level. -O3: the tensor pipeline of
    ``passes/optimize`` (packing, tiling, vectorization, multi-threaded
    kernels). -O0..-O2: plain loops, no tensor-level transformation.

    Target CPU when none is given: a portable ISA level, not the build
    machine — ``x86-64-v3`` (AVX2 + FMA, any x86-64 CPU since ~2015) at -O3 on
    a host that has it, else the codegen default ``x86-64-v2``. ``mcpu="native"``
    asks for everything the build machine has (e.g. AVX-512)."""
    if opt_level < 3:
        return mcpu, None
    if mcpu is None and march is None:
        mcpu = default_o3_mcpu()
    # multi-threaded kernels (thread count chosen at run time, default 1);
    # ONNX_MLIR_PY_O3_THREADS=0 at compile time builds single-threaded code
    threads = os.environ.get("ONNX_MLIR_PY_O3_THREADS", "1") != "0"
    from .passes.optimize import optimize
    from .passes.optimize.target import target_for
    target = target_for(mcpu) if march is None else target_for(None)

    def transform(m: ir.Module) -> None:
        t0 = time.perf_counter()
        optimize(m, target, threads=threads)
        _phase(timings, "optimize (tensor -O3)", t0)
    return mcpu, transform


def default_o3_mcpu() -> str | None:
    from .passes.optimize.target import AVX2, target_for
    if target_for("native").vector_width >= AVX2.vector_width:
        return "x86-64-v3"
    return None


def _write_text(module: ir.Module, out: str | None, print_ir: bool) -> str | None:
    if print_ir:
        print_module(module, sys.stdout)
        return None
    with open(out, "w") as f:
        print_module(module, f, elide=False)
    return out


def expansion_for(emit: str):
    """Ops without a lowering are expanded into their ONNX function bodies
    when the model is going to be lowered (the ONNX-level emits keep them)."""
    if emit in ("EmitONNXBasic", "EmitONNXIR"):
        return None
    from .importer.importer import has_lowering
    return has_lowering


def default_output(model_path: str, emit: str = "EmitLib", base: str | None = None) -> str:
    if base is None:
        base = model_path[:-5] if model_path.endswith(".onnx") else model_path
    return base + SUFFIX[emit]


def compile(model, output: str | os.PathLike | None = None, *, opt_level: int = DEFAULT_OPT_LEVEL,
            emit: str = "EmitLib", shape_information: dict | str | None = None,
            mcpu: str | None = None, march: str | None = None,
            timings: dict | None = None, runtime_checks: bool = True) -> str:
    """Compile an ONNX model (path or ``onnx.ModelProto``) and return the path
    of what was written (``model.so`` by default, next to the model file).

    ``shape_information``: ``{input_index: [dims]}`` (``-1`` = dynamic) or the
    CLI's string form ``"0:1x3x224x224"``. A ModelProto needs ``output``.
    ``runtime_checks=False`` is UNSAFE (``--no-runtime-checks``): the compiled
    code no longer checks index values, dims that must agree and allocation
    sizes, so a bad input reads or writes out of bounds instead of raising
    ``RuntimeInputError``; only for measuring the checks' cost or for inputs
    already validated.
    """
    from .importer import import_model
    from .importer.model import parse_shape_information
    from .passes.pipeline import to_onnx_ir

    if emit not in EMIT_LEVELS:
        raise CompileError(f"emit must be one of {', '.join(EMIT_LEVELS)}, got {emit!r}")
    if output is None:
        if not isinstance(model, (str, os.PathLike)):
            raise CompileError("compile(): 'output' is required when the model is not a path")
        output = default_output(os.fspath(model), emit)
    output = os.fspath(output)
    if isinstance(shape_information, str):
        shape_information = parse_shape_information(shape_information)
    src = os.fspath(model) if isinstance(model, os.PathLike) else model
    t0 = time.perf_counter()
    module = import_model(src, shape_information=shape_information,
                          expand_functions=expansion_for(emit))
    _phase(timings, "import", t0)
    if emit != "EmitONNXBasic":
        to_onnx_ir(module, timings)
    if emit in ("EmitONNXBasic", "EmitONNXIR"):
        return _write_text(module, output, False)
    return lower_and_emit(module, emit, output, opt_level=opt_level, mcpu=mcpu, march=march,
                          timings=timings, runtime_checks=runtime_checks)
