"""onnx-mlir-py: an ONNX compiler on the MLIR Python bindings.

    import onnx_mlir_py
    so = onnx_mlir_py.compile("model.onnx")            # -> model.so
    sess = onnx_mlir_py.ExecutionSession(so)
    outputs = sess.run([x])
"""
__version__ = "0.1.0"


def compile(model, output=None, **options):
    """Compile an ONNX model to a shared object; see :func:`onnx_mlir_py.compiler.compile`."""
    from onnx_mlir_py.compiler import compile as _compile
    return _compile(model, output, **options)


def __getattr__(name):
    if name in ("ExecutionSession", "OMExecutionSession"):
        from onnx_mlir_py import runtime
        return getattr(runtime, name)
    raise AttributeError(f"module 'onnx_mlir_py' has no attribute {name!r}")
