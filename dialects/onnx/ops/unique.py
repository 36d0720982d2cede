"""Unique (11, 28): the distinct values of X (flattened), or its distinct
slices along ``axis``, with their first-occurrence indices, the inverse
indices and the counts.

The number of distinct entries U depends on the values, so it is ``?`` at
compile time; ``unique_dims`` gives every output's dims from X's dims and U
(the lowering calls it with the U it computes at run time):

* no axis: Y [U], indices [U], inverse_indices [numel(X)], counts [U];
* axis a:  Y = X's dims with U on axis a, indices [U], inverse_indices
  [X.shape[a]], counts [U].
"""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import norm_axis


def unique_dims(x: list, axis: int | None, u) -> list[list]:
    """Dims of (Y, indices, inverse_indices, counts); ``x`` X's dims."""
    if axis is None:
        return [[u], [u], [D.product(x)], [u]]
    return [x[:axis] + [u] + x[axis + 1:], [u], [x[axis]], [u]]


def unique_axis(op: OnnxOp, rank: int) -> int | None:
    """The normalized ``axis`` attribute, None when absent (flatten)."""
    if not op.attrs.has("axis"):
        return None
    return norm_axis(op, op.attrs.axis, rank)


@shape_rule("Unique", 11, 28)
def _unique_shape(op: OnnxOp):
    from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
    x, et = op.shape(op.input(0)), op.elem(op.input(0))
    i64 = elem_type(7)
    if x is None:
        outs = [None if op.attrs.has("axis") else tensor((None,), et)] + \
            [tensor((None,), i64)] * 3
    else:
        dims = unique_dims(D.from_static(x), unique_axis(op, len(x)), D.UNKNOWN)
        outs = [tensor(D.to_static(d), et if k == 0 else i64) for k, d in enumerate(dims)]
    if et is None:
        outs[0] = None
    return [outs[k] for k in result_slots(op)]
