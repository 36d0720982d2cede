"""Shape, Size, ConstantOfShape, Constant, Range, Cast, CastLike, NonZero, OneHot."""
from __future__ import annotations

import math
import operator

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import (const_value, fmt, i64, input_shape, int_values,
                                                   norm_axis, single_result)
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
# Constant: whichever value* attribute is set
# --------------------------------------------------------------------------
CONSTANT = (1, 9, 11, 12, 13, 19, 21, 23, 24, 25)
_VALUE_ATTRS = ("value", "sparse_value", "value_float", "value_floats", "value_int",
                "value_ints", "value_string", "value_strings")


@shape_rule("Constant", *CONSTANT)
def _constant_shape(op: OnnxOp):
    attrs = op.op.attributes
    if "value" in attrs:
        return [attrs["value"].type]
    string = ir.Type.parse("!onnx.string")
    for name, shape, et in (("value_int", lambda a: [], i64),
                            ("value_float", lambda a: [], ir.F32Type.get),
                            ("value_string", lambda a: [], lambda: string),
                            ("value_ints", lambda a: [len(a)], i64),
                            ("value_floats", lambda a: [len(a)], ir.F32Type.get),
                            ("value_strings", lambda a: [len(a)], lambda: string)):
        if name in attrs:
            return [tensor(shape(attrs[name]), et())]
    return [None]  # sparse_value: left to the importer's type


@verifier("Constant", *CONSTANT)
def _constant_verify(op: OnnxOp):
    given = [n for n in _VALUE_ATTRS if n in op.op.attributes]
    if len(given) != 1:
        op.fail(f"exactly one value attribute must be set, got "
                f"{len(given)}{' (' + ', '.join(given) + ')' if given else ''}")


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
# Cast / CastLike
# --------------------------------------------------------------------------
CAST = (6, 9, 13, 19, 21, 23, 24, 25, 28)
CAST_LIKE = (15, 19, 21, 23, 24, 25)


def _cast_elem(op: OnnxOp):
    try:
        return elem_type(op.attrs.to)
    except ValueError:
        op.fail(f"attribute 'to' ({op.attrs.to}) is not a supported element type")


@shape_rule("Cast", *CAST)
def _cast_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), _cast_elem(op))]


@verifier("Cast", *CAST)
def _cast_verify(op: OnnxOp):
    _cast_elem(op)


shape_rule("CastLike", *CAST_LIKE)(single_result(input_shape, elem_input=1))


# --------------------------------------------------------------------------
# NonZero: [rank, ?] int64
# --------------------------------------------------------------------------
@shape_rule("NonZero", 9, 13)
def _nonzero_shape(op: OnnxOp):
    return [tensor([op.rank(op.input(0)), None], i64())]


# --------------------------------------------------------------------------
# OneHot: indices' shape with depth inserted at axis
# --------------------------------------------------------------------------
ONE_HOT = (9, 11, 28)


def one_hot_inputs(ctx: D.ShapeChecks, ds: list | None, vs: list | None) -> None:
    """OneHot's depth is a scalar or 1 element (``ds``: its dims), values 2 elements."""
    if ds is not None and len(ds) == 1:
        ctx.require(D.eq(ds[0], 1), "depth must have one element, got {0}", ds[0])
    if vs is not None:
        ctx.require(D.eq(vs[0], 2), "values must have 2 elements (off, on), got {0}", vs[0])


def one_hot_dims(ctx: D.ShapeChecks, ind: list, depth, axis: int) -> list:
    """OneHot result dims: indices' dims with ``depth`` (positive) inserted at
    ``axis`` (normalized)."""
    ctx.require(D.ge(depth, 1), "depth must be positive, got {0}", depth)
    out = list(ind)
    out.insert(axis, depth)
    return out


def _one_hot(op: OnnxOp):
    ind = op.shape(op.input(0))
    ds = op.shape(op.input(1))
    vs = op.shape(op.input(2))
    if ds is not None and len(ds) > 1:
        op.fail(f"depth must be a scalar or have one element, got shape {fmt(ds)}")
    if vs is not None and len(vs) != 1:
        op.fail(f"values must be a 1-D tensor of 2 elements (off, on), got shape {fmt(vs)}")
    c = const_value(op.input(1))
    depth = D.UNKNOWN
    if c is not None and c.size == 1:
        depth = int(np.asarray(c).reshape(()).item())
    ctx = D.inference_checks(op)
    one_hot_inputs(ctx, D.from_static(ds), D.from_static(vs))
    if ind is None:
        one_hot_dims(ctx, [], depth, 0)
        return None
    axis = norm_axis(op, op.attrs.axis, len(ind) + 1)
    return D.to_static(one_hot_dims(ctx, D.from_static(ind), depth, axis))


shape_rule("OneHot", *ONE_HOT)(single_result(_one_hot, elem_input=2))


@verifier("OneHot", *ONE_HOT)
def _one_hot_verify(op: OnnxOp):
    _one_hot(op)
