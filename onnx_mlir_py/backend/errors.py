"""Errors of the ONNX backend: failures of the isolated compiler process.

Errors raised inside the compiler child travel back as a small dict
(``error_to_dict``) and are re-raised in the caller as the same
``OnnxMlirError`` subclass with the same one-line message (``error_from_dict``).
"""
from __future__ import annotations

from onnx_mlir_py import errors as _errors
from onnx_mlir_py.errors import CompileError, OnnxMlirError


class CompilerCrashError(CompileError):
    """The compiler process died (signal or abnormal exit) compiling a model."""


class CompileTimeoutError(CompileError):
    """The compiler process did not finish within the time limit."""


class InternalCompilerError(CompileError):
    """A non-``OnnxMlirError`` exception escaped the compiler (a bug of ours)."""


def _first_line(text: str) -> str:
    lines = [s.strip() for s in str(text).splitlines() if s.strip()]
    return lines[0] if lines else ""


def error_to_dict(e: BaseException) -> dict:
    if isinstance(e, OnnxMlirError):
        d = {"type": type(e).__name__, "module": type(e).__module__, "message": str(e)}
        if getattr(e, "nodes", None) is not None:
            d["nodes"] = [list(n) for n in e.nodes]
        return d
    return {"type": "InternalCompilerError", "module": __name__,
            "message": f"internal error: {type(e).__name__}: {_first_line(e)}",
            "exception": type(e).__name__}


def _known_classes() -> dict[str, type]:
    from onnx_mlir_py.runtime import errors as rt_errors
    out = {}
    for mod in (_errors, rt_errors):
        for name, obj in vars(mod).items():
            if isinstance(obj, type) and issubclass(obj, OnnxMlirError):
                out[name] = obj
    for obj in (CompilerCrashError, CompileTimeoutError, InternalCompilerError):
        out[obj.__name__] = obj
    return out


def error_from_dict(d: dict) -> OnnxMlirError:
    """The exception described by ``d`` (an ``OnnxMlirError`` subclass)."""
    cls = _known_classes().get(d.get("type", ""), CompileError)
    e = cls.__new__(cls)
    OnnxMlirError.__init__(e, d.get("message", ""))
    if "nodes" in d:
        e.nodes = [tuple(n) for n in d["nodes"]]
    return e
