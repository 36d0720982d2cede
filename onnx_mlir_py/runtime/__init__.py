"""Python runtime for compiled model libraries (see :mod:`.session`; :mod:`.signature`,
:mod:`.arguments` and :mod:`.library` are its parts)."""
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.session import ExecutionSession, OMExecutionSession
from onnx_mlir_py.runtime.signature import TensorSig

__all__ = ["ExecutionSession", "OMExecutionSession", "RuntimeInputError",
           "ModelRunError", "TensorSig"]
