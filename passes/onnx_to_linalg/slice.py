"""Slice -> tensor.extract_slice (constant starts/ends/axes/steps).

Per sliced axis: static dims clamp in Python (``slice.indices``); dynamic
dims clamp with index arithmetic on ``tensor.dim``. Negative steps take the
positive-stride slice covering the same elements, then reverse those axes
with a linalg.generic that reads ``tensor.extract`` at mirrored indices.
"""
from __future__ import annotations

from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map
from .tensor_util import (const_ints, extract_slice, imax, imin, imul, isub, loop_index,
                          norm_axis)


def _params(op: OnnxOp, r: int):
    if op.version == 1:
        starts, ends, axes = op.attrs.starts, op.attrs.ends, op.attrs.axes
        steps = None
    else:
        starts = const_ints(op, op.input(1), "starts")
        ends = const_ints(op, op.input(2), "ends")
        axes = const_ints(op, op.input(3), "axes") if op.input(3) is not None else None
        steps = const_ints(op, op.input(4), "steps") if op.input(4) is not None else None
    n = len(starts)
    axes = list(range(n)) if axes is None else [norm_axis(op, a, r, "axes") for a in axes]
    steps = [1] * n if steps is None else steps
    if not (len(ends) == len(axes) == len(steps) == n):
        op.fail("starts, ends, axes and steps must have the same length")
    if 0 in steps:
        op.fail("steps must not be 0")
    return starts, ends, axes, steps


def _clamp_dyn(b: LoweringContext, v: int, dim, lo_neg: bool):
    """ONNX clamping of start/end against a dynamic dim: v<0 -> v+dim, then
    clamp to [0, dim] (step > 0) or [-1, dim-1] (step < 0)."""
    big = 1 << 62
    if v >= big:
        x = dim
    elif v <= -big:
        x = -1 if lo_neg else 0
    elif v < 0:
        x = arith.addi(dim, b.index(v))
    else:
        x = b.index(v)
    if lo_neg:
        return imin(b, imax(b, x, -1), isub(b, dim, 1))
    return imin(b, imax(b, x, 0), dim)


def _axis_range(b: LoweringContext, dim, start: int, end: int, step: int):
    """(first element, count) of the ONNX slice along one axis."""
    if isinstance(dim, int):
        rng = range(*slice(start, end, step).indices(dim))
        return (rng.start if len(rng) else 0), len(rng)
    s = _clamp_dyn(b, start, dim, step < 0)
    e = _clamp_dyn(b, end, dim, step < 0)
    span = isub(b, e, s) if step > 0 else isub(b, s, e)
    cnt = arith.ceildivsi(b.as_index(imax(b, span, 0)), b.index(abs(step)))
    return s, cnt


def reverse_axes(b: LoweringContext, x, axes: list[int]):
    """Reverse x along ``axes`` (linalg.generic + tensor.extract)."""
    r = x.type.rank
    dims = b.dims(x)
    init = b.empty(dims, x.type.element_type)

    def body(_o):
        idx = []
        for k in range(r):
            i = loop_index(k)
            if k in axes:
                i = arith.subi(arith.subi(b.as_index(dims[k]), b.index(1)), i)
            idx.append(i)
        return tensor.extract(x, idx)
    return b.generic([], [init], [affine_map(r, list(range(r)))], ["parallel"] * r, body)[0]


def slice_tensor(b: LoweringContext, x, starts, ends, axes, steps):
    r = x.type.rank
    dims = b.dims(x)
    offs, sizes, strides = [0] * r, list(dims), [1] * r
    rev = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        first, cnt = _axis_range(b, dims[a], s, e, st)
        if st > 0:
            offs[a], sizes[a], strides[a] = first, cnt, st
        else:
            # lowest element: first + (cnt-1)*st
            last = isub(b, first, imul(b, isub(b, cnt, 1), -st))
            if isinstance(cnt, int) and cnt == 0:
                last = 0
            elif not isinstance(cnt, int):
                last = imax(b, last, 0)
            offs[a], sizes[a], strides[a] = last, cnt, -st
            rev.append(a)
    y = extract_slice(b, x, offs, sizes, strides)
    return reverse_axes(b, y, rev) if rev else y


@lowering("Slice", 1, 10, 11, 13)
def lower_slice(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    starts, ends, axes, steps = _params(op, r)
    if len(set(axes)) != len(axes):
        op.fail(f"axes {axes} has duplicates")
    return [slice_tensor(b, x, starts, ends, axes, steps)]
