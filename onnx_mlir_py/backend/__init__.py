"""The ONNX backend of onnx-mlir-py (``onnx.backend.base.Backend``).

    import onnx_mlir_py.backend as backend
    outputs = backend.run_model(model, [x])      # like onnxruntime.backend
    rep = backend.prepare(model); rep.run([x])

Models are compiled to a ``.so`` (cached on disk, see :mod:`.cache`) in a
child process (see :mod:`.isolate`), so an MLIR abort surfaces as
:class:`CompilerCrashError` instead of ending the caller.
"""
from onnx_mlir_py.backend.backend import (OnnxMlirBackend, OnnxMlirBackendRep, prepare, run_model,
                                          run_node, supports_device)
from onnx_mlir_py.backend.cache import CACHE_ENV, CompileCache, cache_dir, compiler_fingerprint
from onnx_mlir_py.backend.compile import compile_cached
from onnx_mlir_py.backend.errors import (CompilerCrashError, CompileTimeoutError,
                                         InternalCompilerError)

__all__ = ["OnnxMlirBackend", "OnnxMlirBackendRep", "prepare", "run_model", "run_node",
           "supports_device", "compile_cached", "CompileCache", "cache_dir", "CACHE_ENV",
           "compiler_fingerprint", "CompilerCrashError", "CompileTimeoutError",
           "InternalCompilerError"]
