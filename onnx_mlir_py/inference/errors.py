"""The exceptions of :class:`~onnx_mlir_py.inference.InferenceSession`, named
as onnxruntime names them (``onnxruntime.capi.onnxruntime_pybind11_state``),
each also a subclass of the project's own error classes, so both
``except InvalidArgument`` and ``except RuntimeInputError`` / ``ValueError``
catch a bad input."""
from __future__ import annotations

from onnx_mlir_py.errors import ModelLoadError, OnnxMlirError
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError


class InvalidArgument(RuntimeInputError):
    """An input feed the model cannot take (unknown or missing input name,
    wrong type, rank or dims), or an unknown output name. The message names
    the input or output."""


class Fail(ModelRunError):
    """The compiled model failed while running (a run-time check of the
    generated code, e.g. dims that must agree: the message names the node),
    or its library could not be loaded."""


class NoSuchFile(ModelLoadError, FileNotFoundError):
    """The model file does not exist."""


class InvalidProtobuf(ModelLoadError):
    """The model bytes are not an ONNX ModelProto."""


class NotImplemented(OnnxMlirError, NotImplementedError):  # noqa: A001 - onnxruntime's name
    """A session option this implementation does not provide."""
