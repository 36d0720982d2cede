"""Python runtime for compiled model libraries (see :mod:`.session`)."""
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.session import ExecutionSession, OMExecutionSession, TensorSig

__all__ = ["ExecutionSession", "OMExecutionSession", "RuntimeInputError",
           "ModelRunError", "TensorSig"]
