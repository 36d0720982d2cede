"""The linalg op builders the compiler uses, without ``mlir.dialects.linalg``.

Importing ``mlir.dialects.linalg`` runs its ``opdsl`` (the Python definition
of every named op, and PyYAML): ~60 ms of each compile (issue #29). The
builders here make the same ops from what that package itself builds on:
the ODS op classes (``_linalg_ops_gen``) and the C++ body builder of named
ops (``fill_builtin_region``). They take the keywords of their upstream
namesakes, return what those return, and set the same attributes:

* ``transpose``, ``matmul``, ``batch_matmul`` as upstream's
  ``linalg/__init__.py`` (no ``indexing_maps`` / ``cast`` attribute);
* the opdsl ops ``fill``, ``copy``, ``pooling_*``, ``conv_*`` as opdsl's
  ``emit_named_structured_op``: ``strides`` / ``dilations`` only when given
  (non-empty), as i64 dense elements; ``copy``'s ``cast`` function attribute
  always (its default, ``cast_signed``), set before the body is built since
  the body builder reads it.

``test/python/test_ir_linalg.py`` checks that each prints as upstream's.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region
from mlir.dialects import _linalg_ops_gen as _ods
from mlir.dialects._linalg_ops_gen import GenericOp, IndexOp, YieldOp  # noqa: F401 (re-exported)
from mlir.dialects._ods_common import get_op_result_or_value as _value

__all__ = ["GenericOp", "IndexOp", "YieldOp", "transpose", "matmul", "batch_matmul", "fill",
           "copy", "pooling_nchw_max", "pooling_nchw_sum", "conv_2d_nchw_fchw",
           "conv_2d_nhwc_fhwc", "conv_2d_ngchw_gfchw", "depthwise_conv_2d_nchw_chw"]


def _init(outs):
    """The one init operand and the result types (its type if a ranked tensor,
    none for a memref)."""
    if len(outs) != 1:
        raise ValueError(f"{outs=} must have length 1.")
    init = _value(outs[0])
    return init, [init.type] if isinstance(init.type, ir.RankedTensorType) else []


def transpose(input, *, outs, permutation):
    """linalg.transpose of ``input`` into ``outs[0]``; returns the op."""
    init, types = _init(outs)
    op = _ods.TransposeOp(types, _value(input), init, permutation)
    fill_builtin_region(op.operation)
    return op


def _contraction(cls):
    def build(*ins, outs):
        init, types = _init(outs)
        op = cls(types, [_value(v) for v in ins], [init])
        fill_builtin_region(op.operation)
        return op.result if types else op.operation
    build.__name__ = build.__qualname__ = cls.OPERATION_NAME[len("linalg."):]
    build.__doc__ = f"{cls.OPERATION_NAME} of ``ins`` into ``outs[0]``: its result (the op on memrefs)."
    return build


matmul = _contraction(_ods.MatmulOp)
batch_matmul = _contraction(_ods.BatchMatmulOp)


def _named(cls, ins, outs, **attrs):
    """An opdsl named op: ``attrs`` (None or empty: left unset) set, then its
    body built. Returns its result (its empty result list on memrefs)."""
    init, types = _init(outs)
    op = cls(types, [_value(v) for v in ins], [init])
    for name, a in attrs.items():
        if a:
            op.operation.attributes[name] = a if isinstance(a, ir.Attribute) else \
                ir.DenseElementsAttr.get(np.asarray(a, dtype=np.int64))
    fill_builtin_region(op.operation)
    return op.result if types else op.results


def fill(value, *, outs):
    """linalg.fill of ``outs[0]`` with the scalar ``value``."""
    return _named(_ods.FillOp, [value], outs)


def copy(input, *, outs):
    """linalg.copy of ``input`` into ``outs[0]`` (a cast_signed elementwise copy)."""
    return _named(_ods.CopyOp, [input], outs,
                  cast=ir.Attribute.parse("#linalg.type_fn<cast_signed>"))


def _windowed(cls):
    def build(input, kernel, *, outs, strides=None, dilations=None):
        return _named(cls, [input, kernel], outs, strides=strides, dilations=dilations)
    build.__name__ = build.__qualname__ = cls.OPERATION_NAME[len("linalg."):]
    build.__doc__ = f"{cls.OPERATION_NAME}: its result; ``strides`` / ``dilations`` lists of ints."
    return build


pooling_nchw_max = _windowed(_ods.PoolingNchwMaxOp)
pooling_nchw_sum = _windowed(_ods.PoolingNchwSumOp)
conv_2d_nchw_fchw = _windowed(_ods.Conv2DNchwFchwOp)
conv_2d_nhwc_fhwc = _windowed(_ods.Conv2DNhwcFhwcOp)
conv_2d_ngchw_gfchw = _windowed(_ods.Conv2DNgchwGfchwOp)
depthwise_conv_2d_nchw_chw = _windowed(_ods.DepthwiseConv2DNchwChwOp)
