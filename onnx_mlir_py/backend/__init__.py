"""The ONNX backend of onnx-mlir-py (``onnx.backend.base.Backend``).

    import onnx_mlir_py.backend as backend
    outputs = backend.run_model(model, [x])      # like onnxruntime.backend
    rep = backend.prepare(model); rep.run([x])

Models are compiled to a ``.so`` (cached on disk, see :mod:`.cache`) in a
child process (see :mod:`.isolate`), so an MLIR abort surfaces as
:class:`CompilerCrashError` instead of ending the caller.

The names are loaded on first use: importing a submodule (the compile cache,
which ``InferenceSession`` reads at start-up) does not import onnx.
"""
import importlib

_NAMES = {
    "onnx_mlir_py.backend.backend": ("OnnxMlirBackend", "OnnxMlirBackendRep", "prepare",
                                     "run_model", "run_node", "supports_device"),
    "onnx_mlir_py.backend.cache": ("CACHE_ENV", "CompileCache", "cache_dir",
                                   "compiler_fingerprint"),
    "onnx_mlir_py.backend.compile": ("compile_cached",),
    "onnx_mlir_py.backend.errors": ("CompilerCrashError", "CompileTimeoutError",
                                    "InternalCompilerError"),
}
_WHERE = {name: mod for mod, names in _NAMES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'onnx_mlir_py.backend' has no attribute {name!r}")
    return getattr(importlib.import_module(mod), name)


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
