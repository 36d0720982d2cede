"""The ``linalg`` dialect's module for the bindings, in place of
``mlir.dialects.linalg`` (whose import runs opdsl: ~60 ms, #29): its op
classes, the ones ``mlir.dialects.linalg`` has (see :func:`register`)."""
from mlir.dialects import _linalg_ops_gen  # noqa: F401 (registers the op classes)
