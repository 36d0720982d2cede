"""Shape, Size, ConstantOfShape, Range."""
from __future__ import annotations

import math
import operator

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_value, fmt, i64, int_values
from onnx_mlir_py.dialects.onnx.ops.reshape import fmt_target

SHAPE = (1, 13, 15, 19, 21, 23, 24, 25)
SIZE = (1, 13, 19, 21, 23, 24, 25)


@shape_rule("Shape", *SHAPE)
def _shape_shape(op: OnnxOp):
    s = op.shape(op.input(0))
    if s is None:
        return [tensor([None], i64())]
    start, end = (op.attrs.start, op.attrs.end) if op.version >= 15 else (0, None)
    return [tensor([len(s[start:end])], i64())]


@shape_rule("Size", *SIZE)
def _size_shape(op: OnnxOp):
    return [tensor([], i64())]


# --------------------------------------------------------------------------
# ConstantOfShape
# --------------------------------------------------------------------------
CONSTANT_OF_SHAPE = (9, 20, 21, 23, 24, 25)


def _cos_elem(op: OnnxOp) -> ir.Type:
    a = op.op.attributes["value"] if "value" in op.op.attributes else None
    if a is not None and isinstance(a.type, ir.ShapedType):
        return a.type.element_type
    return ir.F32Type.get()


def cos_dims(ctx: D.ShapeChecks, shape: list) -> list:
    """ConstantOfShape's result dims: the input's elements, each >= 0."""
    for d in shape:
        ctx.require(D.ge(d, 0), f"shape {fmt_target(shape)} has a negative dim {{0}}", d)
    return list(shape)


@shape_rule("ConstantOfShape", *CONSTANT_OF_SHAPE)
def _cos_shape(op: OnnxOp):
    dims = int_values(op.input(0))
    if dims is not None:
        dims = D.to_static(cos_dims(D.ShapeChecks(lambda _m: None), D.from_static(dims)))
    return [tensor(dims, _cos_elem(op))]


@verifier("ConstantOfShape", *CONSTANT_OF_SHAPE)
def _cos_verify(op: OnnxOp):
    r = op.rank(op.input(0))
    if r is not None and r != 1:
        op.fail(f"input must be a 1-D shape, got rank {r}")
    dims = int_values(op.input(0))
    if dims is not None:
        cos_dims(D.inference_checks(op), D.from_static(dims))
    if "value" in op.op.attributes:
        t = op.op.attributes["value"].type
        if isinstance(t, ir.ShapedType) and (not t.has_static_shape or
                                              math.prod(t.shape) != 1):
            op.fail(f"attribute 'value' must hold one element, got {t}")


# --------------------------------------------------------------------------
# Range
# --------------------------------------------------------------------------
def _scalar(op: OnnxOp, v):
    c = const_value(v)
    if c is None or c.size != 1:
        return None
    return c.reshape(()).item()


def range_len(ctx: D.ShapeChecks, start, limit, delta, ceil_div=D.ceil_div,
              sub=operator.sub) -> D.Dim:
    """Range's length ``max(ceil((limit - start) / delta), 0)``, delta != 0.
    Integer operands are dims (ints, ``UNKNOWN`` or run-time); floating-point
    ones pass their ``ceil_div``/``sub`` (and check delta themselves)."""
    if ceil_div is D.ceil_div:
        ctx.require(D.ne(delta, 0), "delta must not be 0")
    return D.dmax(ceil_div(sub(limit, start), delta), 0)


@shape_rule("Range", 11, 27)
def _range_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    start, limit, delta = (_scalar(op, op.input(k)) for k in range(3))
    if None in (start, limit, delta) or delta == 0:
        return [tensor([None], et)]
    fl = any(isinstance(v, float) for v in (start, limit, delta))
    n = range_len(D.ShapeChecks(lambda _m: None), start, limit, delta,
                  (lambda a, b: int(math.ceil(a / b))) if fl else D.ceil_div)
    return [tensor([n], et)]


@verifier("Range", 11, 27)
def _range_verify(op: OnnxOp):
    for k, name in enumerate(("start", "limit", "delta")):
        s = op.shape(op.input(k))
        # a scalar, or one element ([?] is checked at run time)
        if s is not None and not (len(s) == 0 or (len(s) == 1 and s[0] in (1, None))):
            op.fail(f"{name} must be a scalar, got shape {fmt(s)}")
    if _scalar(op, op.input(2)) == 0:
        op.fail("delta must not be 0")


# --------------------------------------------------------------------------
