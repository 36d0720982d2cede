"""Compile and run in child processes, so that a compiler abort (an
MLIR/LLVM assertion, a signal) or a compiled model that corrupts memory fails
one test instead of killing the test session.

:func:`compile_isolated` calls ``onnx_mlir_py.compile`` in a child,
:func:`run_isolated` runs a compiled model through ``ExecutionSession`` in a
child. An ``Exception`` there is raised again here with the same type and
message; a dead child raises :class:`CompilerCrash` / :class:`ModelCrash`
with the assertion line (or the last stderr line).
"""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx


class CompilerCrash(RuntimeError):
    """The compiler process died (an MLIR/LLVM assertion abort, a signal)."""


class ModelCrash(RuntimeError):
    """The process running a compiled model died (a signal, heap corruption)."""


_CHILD = """
import sys, onnx_mlir_py
try:
    onnx_mlir_py.compile(sys.argv[1], sys.argv[2], opt_level=int(sys.argv[3]))
except Exception as e:
    print(f"{type(e).__module__}.{type(e).__qualname__}\\t{e}".replace("\\n", " "))
    sys.exit(1)
"""


_RUN_CHILD = """
import sys, numpy as np
from onnx_mlir_py.runtime import ExecutionSession
try:
    src = np.load(sys.argv[2])
    sess = ExecutionSession(sys.argv[1])
    out = {}
    for r in range(int(src["runs"])):
        res = sess.run([src[f"{r}_{i}"] for i in range(int(src[f"n_{r}"]))])
        out[f"n_{r}"] = np.array(len(res))
        out.update({f"{r}_{j}": a for j, a in enumerate(res)})
    np.savez(sys.argv[3], **out)
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
    raise RuntimeError(f"{qual}: {msg}")


def compile_isolated(model, output: str | os.PathLike, opt_level: int = 3,
                     timeout: float = 600) -> str:
    """``onnx_mlir_py.compile(model, output, opt_level=...)`` in a child process;
    ``model`` is a path or an ``onnx.ModelProto``. Returns ``output``; a compile
    that outlives ``timeout`` seconds raises ``subprocess.TimeoutExpired``."""
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
    raise CompilerCrash(_death(r))


def _death(r: subprocess.CompletedProcess) -> str:
    err = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith(" ")]
    why = next((ln for ln in err if "Assertion" in ln), err[-1] if err else "")
    return f"exit status {r.returncode}: {why}"


def run_isolated(so: str | os.PathLike, runs: list[list[np.ndarray]],
                 timeout: float = 300) -> list[list[np.ndarray]]:
    """``ExecutionSession(so).run(inputs)`` for each ``inputs`` of ``runs``,
    in one child process; returns the outputs of each run."""
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.npz"), os.path.join(d, "out.npz")
        feeds = {"runs": np.array(len(runs))}
        for k, inputs in enumerate(runs):
            feeds[f"n_{k}"] = np.array(len(inputs))
            feeds.update({f"{k}_{i}": a for i, a in enumerate(inputs)})
        np.savez(src, **feeds)
        r = subprocess.run([sys.executable, "-c", _RUN_CHILD, os.fspath(so), src, dst],
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode == 0:
            with np.load(dst) as out:
                return [[out[f"{k}_{j}"] for j in range(int(out[f"n_{k}"]))]
                        for k in range(len(runs))]
    last = (r.stdout.strip().splitlines() or [""])[-1]
    if r.returncode == 1 and "\t" in last:
        _reraise(*last.split("\t", 1))
    raise ModelCrash(_death(r))
