"""Errors raised by the Python runtime (:class:`ExecutionSession`)."""
from __future__ import annotations

from onnx_mlir_py.errors import OnnxMlirError


class RuntimeInputError(OnnxMlirError, ValueError):
    """The inputs given to ``ExecutionSession.run`` do not match the model's
    input signature; the message names the input (index and name) and says
    what was expected and what was given."""


class ModelRunError(OnnxMlirError, RuntimeError):
    """Loading the model library or running it failed."""
