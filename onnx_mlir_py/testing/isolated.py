"""Compile in a child process, so that a compiler abort (an MLIR/LLVM
assertion, a signal) fails one test instead of killing the test session.

The child calls ``onnx_mlir_py.compile``; an ``Exception`` there is raised
again here with the same type and message; a dead child raises
:class:`CompilerCrash` with the assertion line (or the last stderr line).
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile

import onnx


class CompilerCrash(RuntimeError):
    """The compiler process died (an MLIR/LLVM assertion abort, a signal)."""


_CHILD = """
import sys, onnx_mlir_py
try:
    onnx_mlir_py.compile(sys.argv[1], sys.argv[2], opt_level=int(sys.argv[3]))
except Exception as e:
    print(f"{type(e).__module__}.{type(e).__qualname__}\\t{e}".replace("\\n", " "))
    sys.exit(1)
"""


def _reraise(qual: str, msg: str) -> None:
    mod, _, cls = qual.rpartition(".")
    try:
        exc = getattr(importlib.import_module(mod), cls, None)
    except ImportError:
        exc = None
    if isinstance(exc, type) and issubclass(exc, Exception):
        e = exc.__new__(exc)                # whatever its __init__ takes: str(e) == msg
        Exception.__init__(e, msg)
        raise e
    raise CompilerCrash(f"{qual}: {msg}")


def compile_isolated(model, output: str | os.PathLike, opt_level: int = 3,
                     timeout: float = 600) -> str:
    """``onnx_mlir_py.compile(model, output, opt_level=...)`` in a child process;
    ``model`` is a path or an ``onnx.ModelProto``. Returns ``output``."""
    output = os.fspath(output)
    with tempfile.TemporaryDirectory() as d:
        if isinstance(model, onnx.ModelProto):
            path = os.path.join(d, "model.onnx")
            onnx.save(model, path)
        else:
            path = os.fspath(model)
        r = subprocess.run([sys.executable, "-c", _CHILD, path, output, str(opt_level)],
                           capture_output=True, text=True, timeout=timeout)
    if r.returncode == 0:
        return output
    last = (r.stdout.strip().splitlines() or [""])[-1]
    if r.returncode == 1 and "\t" in last:
        _reraise(*last.split("\t", 1))
    err = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith(" ")]
    why = next((ln for ln in err if "Assertion" in ln), err[-1] if err else "")
    raise CompilerCrash(f"exit status {r.returncode}: {why}")
