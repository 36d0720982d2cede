"""``ort.set_default_logger_severity`` / ``ort.set_default_logger_verbosity``.

Severity (onnxruntime's levels: 0 verbose, 1 info, 2 warning (default),
3 error, 4 fatal) sets the level of the ``onnx_mlir_py`` logger, and from 3
turns off this package's warnings (:class:`~onnx_mlir_py.errors.OnnxMlirWarning`
and its subclasses: cache entries replaced, ignored config entries, ...)
through a ``warnings`` filter, removed again by a severity below 3.
Verbosity is stored (onnxruntime uses it at severity 0 for its VLOG output;
this package has none).
"""
from __future__ import annotations

import logging
import warnings

from onnx_mlir_py.errors import OnnxMlirWarning

LOGGER = "onnx_mlir_py"
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)
_FILTER = ("ignore", None, OnnxMlirWarning, None, 0)
_state = {"severity": 2, "verbosity": 0}


def _int(fn: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{fn}() takes an int, got {value!r}")
    return value


def set_default_logger_severity(severity) -> None:
    """Sets the default logging severity. 0:Verbose, 1:Info, 2:Warning, 3:Error, 4:Fatal"""
    severity = _int("set_default_logger_severity", severity)
    if not 0 <= severity <= 4:
        raise RuntimeError(f"Invalid logging severity {severity}. 0:Verbose, 1:Info, "
                           "2:Warning, 3:Error, 4:Fatal")
    _state["severity"] = severity
    logging.getLogger(LOGGER).setLevel(_LEVELS[severity])
    quiet = _FILTER in warnings.filters
    if severity >= 3 and not quiet:
        warnings.filterwarnings("ignore", category=OnnxMlirWarning)
    elif severity < 3 and quiet:
        warnings.filters.remove(_FILTER)
        mutated = getattr(warnings, "_filters_mutated", None)   # re-read by warn()
        if mutated is not None:
            mutated()


def set_default_logger_verbosity(verbosity) -> None:
    """Sets the default logging verbosity level (used at severity 0)."""
    _state["verbosity"] = _int("set_default_logger_verbosity", verbosity)


def get_default_logger_severity() -> int:
    return _state["severity"]
