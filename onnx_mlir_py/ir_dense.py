"""Reading ``DenseElementsAttr`` constants back into numpy.

Use :func:`dense_to_numpy` instead of ``np.array(attr)`` whenever the
attribute may hold booleans (i1). Workaround for a bug of the MLIR Python
bindings (MLIR 22, ``getBooleanBufferFromBitpackedAttribute`` in
``IRAttributes.cpp``): for an i1 attribute the bindings unpack
``ceil(n / 8)`` bytes from ``mlirDenseElementsAttrGetRawData``, but MLIR stores
a *splat* i1 attribute as one byte, and every all-false or all-true bool
buffer becomes a splat when it is created. ``np.array`` of such an attribute
with more than 8 elements reads past the end of that byte (whatever the
context's allocator placed next, so the values change from run to run)
and gives random booleans. (Splats of other element types are read correctly:
the bindings give them zero strides.) So an i1 splat is read here through
``get_splat_value()``, and only a non-splat i1 goes through the buffer protocol.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np


def _is_i1(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 1


def dense_to_numpy(a: ir.DenseElementsAttr) -> np.ndarray | None:
    """The value of ``a`` as a numpy array of its full shape (splats
    expanded), or None for element types numpy cannot hold (bf16, f8, ...)."""
    shape = list(a.type.shape)
    if _is_i1(a.type.element_type) and a.is_splat:
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return np.zeros(shape, np.bool_)
        return np.full(shape, bool(a.get_splat_value().value), np.bool_)
    try:
        arr = np.array(a)
    except Exception:  # element types numpy cannot hold (bf16, f8, ...)
        return None
    if arr.size == 1 and int(np.prod(shape)) != 1:  # splat
        arr = np.broadcast_to(arr.reshape(()), shape).copy()
    return arr.reshape(shape)
