"""Selection ops, whose output sizes depend on the data (rank and the known
dims only): TopK (values of X's type and int64 indices; dim ``axis``
becomes k), NonZero ([rank, ?] int64), Compress (``axis`` becomes ?, or
1-D without an axis)."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, fmt, i64, norm_axis


TOPK = (1, 10, 11, 24)


def _topk(op: OnnxOp):
    s = op.shape(op.input(0))
    if op.version == 1:
        k = op.attrs.k
    else:
        ks = op.shape(op.input(1))
        if ks is not None and ks != (1,) and ks != (None,):
            op.fail(f"K must be a 1-D tensor of one element, got shape {fmt(ks)}")
        c = const_ints(op.input(1))
        k = c[0] if c and len(c) == 1 else None
    if k is not None and k < 0:
        op.fail(f"k must be >= 0, got {k}")
    if s is None:
        return None
    if len(s) == 0:
        op.fail("input must have rank >= 1, got a scalar")
    a = norm_axis(op, op.attrs.axis, len(s))
    if k is not None and s[a] is not None and k > s[a]:
        op.fail(f"k {k} is larger than dim {a} of input {fmt(s)}")
    return [k if j == a else d for j, d in enumerate(s)]


@shape_rule("TopK", *TOPK)
def _topk_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    out = _topk(op)
    return [None if et is None else tensor(out, et), tensor(out, i64())]


verifier("TopK", *TOPK)(_topk)


@shape_rule("NonZero", 9, 13)
def _nonzero_shape(op: OnnxOp):
    return [tensor([op.rank(op.input(0)), None], i64())]


@shape_rule("Compress", 9, 11, 28)
def _compress_shape(op: OnnxOp):
    x, et = op.shape(op.input(0)), op.elem(op.input(0))
    if et is None:
        return [None]
    if not op.attrs.has("axis"):
        return [tensor((None,), et)]
    if x is None:
        return [tensor(None, et)]
    a = norm_axis(op, op.attrs.axis, len(x))
    return [tensor(x[:a] + (None,) + x[a + 1:], et)]
