"""Python runtime for compiled model libraries (see :mod:`.session`)."""
from .errors import ModelRunError, RuntimeInputError
from .session import ExecutionSession, OMExecutionSession, TensorSig

__all__ = ["ExecutionSession", "OMExecutionSession", "RuntimeInputError",
           "ModelRunError", "TensorSig"]
