"""Softmax -> numerically stable max / exp-sum / divide as linalg.generic ops.

v13 reduces along ``axis``; v1/v11 coerce the input to 2-D at ``axis`` and
so reduce over all dims from ``axis`` on.
"""
from __future__ import annotations

from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float


def softmax(op: OnnxOp, b: LoweringContext, x, red_dims: list[int], log: bool = False):
    r = x.type.rank
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float softmax is supported")
    dims = b.dims(x)
    keep = [k for k in range(r) if k not in red_dims]
    full = affine_map(r, list(range(r)))
    part = affine_map(r, keep)
    par = ["parallel"] * r
    red_it = ["reduction" if k in red_dims else "parallel" for k in range(r)]
    kdims = [dims[k] for k in keep]
    mx = b.generic([x], [b.full(kdims, et, float("-inf"))], [full, part], red_it,
                   lambda v, acc: arith.maximumf(acc, v))[0]
    ex = b.generic([x, mx], [b.empty(dims, et)], [full, part, full], par,
                   lambda v, m, _o: math.exp(arith.subf(v, m)))[0]
    sm = b.generic([ex], [b.full(kdims, et, 0.0)], [full, part], red_it,
                   lambda v, acc: arith.addf(acc, v))[0]
    return b.generic([ex, sm], [b.empty(dims, et)], [full, part, full], par,
                     lambda e, s, _o: arith.divf(e, s))[0]


def _axis(op: OnnxOp, r: int) -> int:
    a = op.attrs.axis
    a = a + r if a < 0 else a
    if not 0 <= a < r:
        op.fail(f"axis {op.attrs.axis} out of range for rank {r}")
    return a


@lowering("Softmax", 13)
def lower_softmax(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    return [softmax(op, b, x, [_axis(op, r)])]


@lowering("Softmax", 1, 11)
def lower_softmax_v11(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    return [softmax(op, b, x, list(range(_axis(op, r), r)))]
