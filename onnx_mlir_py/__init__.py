"""onnx-mlir-py: an ONNX compiler on the MLIR Python bindings.

    import onnx_mlir_py
    so = onnx_mlir_py.compile("model.onnx")            # -> model.so
    sess = onnx_mlir_py.ExecutionSession(so)
    outputs = sess.run([x])

onnxruntime's API (compiles on first use into the compile cache):

    import onnx_mlir_py as ort
    sess = ort.InferenceSession("model.onnx")
    outputs = sess.run(None, {"input": x})
"""
__version__ = "0.1.0"

from onnx_mlir_py import dlopen_guard as _dlopen_guard  # noqa: E402

_dlopen_guard.install()     # MLIR loaded after TensorFlow (see dlopen_guard.py)


def compile(model, output=None, **options):
    """Compile an ONNX model to a shared object; see :func:`onnx_mlir_py.compiler.compile`."""
    from onnx_mlir_py.compiler import compile as _compile
    return _compile(model, output, **options)


# onnxruntime's names (onnx_mlir_py.inference), so `import onnx_mlir_py as ort` works
_INFERENCE = ("InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
              "ExecutionMode", "NodeArg", "ModelMetadata", "get_available_providers",
              "get_all_providers", "get_device", "InvalidArgument", "Fail", "NoSuchFile",
              "InvalidProtobuf", "NotImplemented", "OrtValue", "IOBinding",
              "set_default_logger_severity", "set_default_logger_verbosity")


def __getattr__(name):
    if name in ("ExecutionSession", "OMExecutionSession"):
        from onnx_mlir_py import runtime
        return getattr(runtime, name)
    if name in _INFERENCE:
        from onnx_mlir_py import inference
        return getattr(inference, name)
    raise AttributeError(f"module 'onnx_mlir_py' has no attribute {name!r}")


def __dir__():
    """The lazily loaded names too (``dir(ort)``, tab completion)."""
    return sorted(list(globals()) + ["ExecutionSession", "OMExecutionSession", *_INFERENCE])
