"""The frontend's errors: one line each, as every OnnxMlirError."""
from __future__ import annotations

import importlib.util

from onnx_mlir_py.errors import ModelLoadError

EXTRA_NEEDED = "TensorFlow input needs: pip install onnx-mlir-py[tf]"
PACKAGES = ("tensorflow", "tf2onnx")


class TensorFlowError(ModelLoadError):
    """A TensorFlow model could not be read or converted to ONNX."""


def missing_packages() -> list[str]:
    """The packages of the ``[tf]`` extra that are not installed (none imported).
    A folder of that name on ``sys.path`` without ``__init__.py`` (a namespace
    package, e.g. ``test/python/tensorflow`` when pytest put ``test/python``
    there) is not the package."""
    def installed(name):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):    # sys.modules[name] is None: blocked
            return False
        return spec is not None and spec.origin not in (None, "namespace")
    return [p for p in PACKAGES if not installed(p)]


def require_extra(path: str, fmt: str) -> None:
    missing = missing_packages()
    if missing:
        raise TensorFlowError(f"{EXTRA_NEEDED} ('{path}' is a {fmt} model; "
                              f"not installed: {', '.join(missing)})")


def one_line(e: BaseException) -> str:
    """An exception of TensorFlow / tf2onnx as one line (their messages run
    to many lines: MLIR diagnostics, stack summaries)."""
    text = " ".join(str(e).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
