"""OneHot (indices' shape with depth inserted at axis) and EyeLike (the
input's shape; type from ``dtype`` when set, else the input's)."""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import (const_value, dtype_or_input, fmt, like_input,
                                                   norm_axis, single_result)


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


shape_rule("EyeLike", 9, 22)(lambda op: like_input(op, dtype_or_input(op, "dtype")))
