"""Relayouts of constant weights done once, at compile time.

    Gemm(A, B, C) transB=1, B constant  => Gemm(A, B^T, C) transB=0
    Gemm(A, B, C) transA=1, A constant  => Gemm(A^T, B, C) transA=0
    Transpose(W), W constant (any size)  => constant W.transpose(perm)

Without them the lowering transposes the weights on every call
(``linalg.transpose`` of a constant). ``fold_constants`` already folds small
constant sub-graphs; these also take large ``dense_resource`` weights.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, copy_attrs, is_constant,
                                                       make_constant, onnx_ops, replace,
                                                       replace_with_constant)

_FLOAT = (np.float16, np.float32, np.float64)


def pretranspose_gemm_weights(module: ir.Module) -> int:
    count = 0
    for g in onnx_ops(module, "Gemm"):
        flips = [(k, name) for k, name in ((0, "transA"), (1, "transB"))
                 if getattr(g.attrs, name) and is_constant(g.input(k))]
        if not flips:
            continue
        vals = constant_values([g.input(k) for k, _ in flips])
        if any(v is None or v.ndim != 2 or v.dtype.type not in _FLOAT for v in vals):
            continue
        loc = g.op.location
        operands = [g.input(i) for i in range(3)]
        attrs = copy_attrs(g.op)
        with ir.InsertionPoint(g.op), loc:
            for (k, name), v in zip(flips, vals):
                operands[k] = make_constant(np.ascontiguousarray(v.T), loc, "gemm_w")
                attrs[name] = ir.IntegerAttr.get(ir.IntegerType.get_signed(64), 0)
            new = ir.Operation.create(g.op.name, results=[g.op.results[0].type],
                                      operands=[x for x in operands if x is not None],
                                      attributes=attrs, loc=loc)
        replace(g.op, new.results[0])
        count += 1
    return count


def fold_constant_transposes(module: ir.Module) -> int:
    count = 0
    for t in onnx_ops(module, "Transpose"):
        x, y = t.input(0), t.op.results[0]
        if not is_constant(x) or not isinstance(y.type, ir.RankedTensorType) \
                or not y.type.has_static_shape:
            continue
        v = constant_values([x])[0]
        if v is None:
            continue
        perm = t.attrs.perm or list(range(v.ndim - 1, -1, -1))
        out = np.ascontiguousarray(v.transpose(perm))
        if list(out.shape) != list(y.type.shape):
            continue
        replace_with_constant(t.op, out, "transposed")
        count += 1
    return count
