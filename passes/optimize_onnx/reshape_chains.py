"""Data-movement ops that cancel or merge.

    Transpose(Transpose(x, p), q)     => Transpose(x, p[q]), or x if identity
    Transpose(x, identity)            => x
    R2(R1(x))  (R1, R2 reshape-like, static result)  => Reshape(x, shape(R2))
                                    (not for an empty result: a 0 there means 'copy')
    Reshape / Flatten / Squeeze / Unsqueeze / Expand / Cast / CastLike whose
    result type equals its input type => x

Reshape-like: Reshape, Flatten, Squeeze, Unsqueeze (row-major data order is
unchanged, so only the final static shape matters). The inner op is left
for canonicalize-onnx to delete when nothing else uses it.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.optimize_onnx.ir_util import (create_op, lowerable_spec, make_constant,
                                                       module_opset, onnx_ops, producer, replace,
                                                       same_type, spec_table, static_shape)

RESHAPE_LIKE = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")
IDENTITY_LIKE = RESHAPE_LIKE + ("Expand", "Cast", "CastLike")


def transpose_perm(t: OnnxOp) -> list[int] | None:
    """A Transpose's permutation (its default: the dims reversed), None at unknown rank."""
    r = t.rank(t.input(0))
    if r is None:
        return None
    p = t.attrs.perm
    return list(p) if p else list(range(r - 1, -1, -1))


def _view(op: ir.Operation | None) -> OnnxOp | None:
    if op is None or op.name not in spec_table().by_mlir_name:
        return None
    v = OnnxOp(op)
    return None if v.spec.domain else v


def merge_transposes(module: ir.Module) -> int:
    count = 0
    for t in onnx_ops(module, "Transpose"):
        q = transpose_perm(t)
        if q is None:
            continue
        x = t.input(0)
        if q == list(range(len(q))) and same_type(x, t.op.results[0]):
            replace(t.op, x)
            count += 1
            continue
        inner = _view(producer(x))
        if inner is None or inner.op_type != "Transpose":
            continue
        p = transpose_perm(inner)
        if p is None or len(p) != len(q):
            continue
        composed = [p[i] for i in q]
        src = inner.input(0)
        if composed == list(range(len(q))):
            if not same_type(src, t.op.results[0]):
                continue
            replace(t.op, src)
        else:
            with ir.InsertionPoint(t.op), t.op.location:
                attrs = {"perm": ir.DenseI64ArrayAttr.get(composed)}
                new = create_op(t.spec, [src], [t.op.results[0].type], attrs, t.op.location)
            replace(t.op, new.results[0])
        count += 1
    return count


def merge_reshapes(module: ir.Module) -> int:
    count = 0
    spec = lowerable_spec("Reshape", module_opset(module))
    if spec is None:
        return 0
    for op_type in RESHAPE_LIKE:
        for r2 in onnx_ops(module, op_type):
            out = r2.op.results[0]
            shape = static_shape(out)
            r1 = _view(producer(r2.input(0)))
            if shape is None or 0 in shape or r1 is None or r1.op_type not in RESHAPE_LIKE:
                continue    # a 0 in Reshape's shape copies the input's dim (fuzz s2701-10)
            src = r1.input(0)
            if static_shape(src) is None:
                continue
            with ir.InsertionPoint(r2.op), r2.op.location:
                s = make_constant(np.array(shape, np.int64), r2.op.location, "shape")
                new = create_op(spec, [src, s], [out.type], {}, r2.op.location)
            replace(r2.op, new.results[0])
            count += 1
    return count


def remove_identity_like(module: ir.Module) -> int:
    count = 0
    for op_type in IDENTITY_LIKE:
        for op in onnx_ops(module, op_type):
            x = op.input(0)
            if len(op.op.results) == 1 and same_type(x, op.op.results[0]):
                replace(op.op, x)
                count += 1
    return count
