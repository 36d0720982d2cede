"""Slice: v1 (starts/ends/axes attributes), v10+ (inputs, with steps).

``slice_axis`` is the one computation of a sliced axis (ONNX clamping,
first element and count); the shape rule runs it on ints/UNKNOWN, the
lowering on run-time values. Starts/ends/steps that are not known make the
sliced dims dynamic; axes that are not known make every dim dynamic (the
rank is always the input's).
"""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import (const_ints, int_values, known_len, norm_axes,
                                                   single_result)

SLICE = (1, 10, 11, 13)


def slice_axis(ctx: D.ShapeChecks, dim, start, end, step):
    """(first index read, element count) of ONNX Slice along one axis of
    size ``dim``. As the spec says: negative start/end get ``dim`` added;
    then start clamps to [0, dim] (step > 0) or [0, dim-1] (step < 0), end
    to [0, dim] or [-1, dim-1]. Element i of the result is at
    ``first + i * step``."""
    ctx.require(D.ne(step, 0), "steps must not be 0")
    pos = D.gt(step, 0)
    s = D.select(D.lt(start, 0), start + dim, start)
    e = D.select(D.lt(end, 0), end + dim, end)
    hi = D.select(pos, dim, dim - 1)
    s = D.dmin(D.dmax(s, 0), hi)
    e = D.dmin(D.dmax(e, D.select(pos, 0, -1)), hi)
    # (e - s) / step rounded up, 0 if negative (no -step: it overflows for INT64_MIN)
    diff = e - s
    return s, D.ceil_div(D.select(pos, D.dmax(diff, 0), D.dmin(diff, 0)), step)


def _params(op: OnnxOp):
    """(starts, ends, axes, steps): lists (elements int or None = unknown),
    or None when not even the length is known; axes only when constant."""
    if op.version == 1:
        return list(op.attrs.starts), list(op.attrs.ends), op.attrs.axes, None
    starts, ends = int_values(op.input(1)), int_values(op.input(2))
    axes = const_ints(op.input(3)) if op.input(3) is not None else None
    steps = int_values(op.input(4)) if op.input(4) is not None else None
    return starts, ends, axes, steps


def _lengths(op: OnnxOp, starts, ends, axes, steps) -> int | None:
    """The common length of starts/ends/axes/steps if known (fails if two
    known lengths differ)."""
    if op.version == 1:
        lens = {"starts": len(starts), "ends": len(ends)}
        if axes is not None:
            lens["axes"] = len(axes)
    else:
        lens = {}
        for name, c, i in (("starts", starts, 1), ("ends", ends, 2), ("axes", axes, 3),
                           ("steps", steps, 4)):
            if op.input(i) is not None:
                lens[name] = len(c) if c is not None else known_len(op.input(i))
    known = {k: v for k, v in lens.items() if v is not None}
    if len(set(known.values())) > 1:
        op.fail("starts, ends, axes and steps must have the same length, got " +
                ", ".join(f"{k} {v}" for k, v in known.items()))
    return next(iter(known.values()), None)


def _slice(op: OnnxOp):
    s = op.shape(op.input(0))
    starts, ends, axes, steps = _params(op)
    n = _lengths(op, starts, ends, axes, steps)
    if steps is not None and 0 in steps:
        op.fail(f"steps {steps} has a 0 step")
    ctx = D.inference_checks(op)
    if s is None:
        return None
    r = len(s)
    if op.version > 1 and op.input(3) is not None and axes is None:
        return [None] * r  # which dims are sliced is unknown
    if axes is None:
        if n is None:
            return [None] * r
        axes = list(range(n))
    ax = norm_axes(op, axes, r)
    out = list(D.from_static(s))

    def elem(vals, j):
        return D.UNKNOWN if vals is None or vals[j] is None else vals[j]
    for j, a in enumerate(ax):
        step = 1 if op.version == 1 or op.input(4) is None else elem(steps, j)
        _, out[a] = slice_axis(ctx, out[a], elem(starts, j), elem(ends, j), step)
    return D.to_static(out)


shape_rule("Slice", *SLICE)(single_result(_slice))


def fold_slice(op: OnnxOp, data: np.ndarray) -> np.ndarray | None:
    """Slice of the constant ``data`` with constant parameters, as the spec
    clamps (constant folding: onnx.reference slices with numpy, which gives
    nothing for a negative step and a start below -dim). None when a
    parameter is not known; invalid ones fail as in the shape rule."""
    starts, ends, axes, steps = _params(op)
    n = _lengths(op, starts, ends, axes, steps)
    if n is None or None in starts + ends or (steps is not None and None in steps) or \
            (op.version > 1 and op.input(3) is not None and axes is None):
        return None
    ax = norm_axes(op, list(range(n)) if axes is None else axes, data.ndim)
    ctx = D.inference_checks(op)
    out = data
    for j, a in enumerate(ax):
        step = 1 if steps is None else steps[j]
        first, count = slice_axis(ctx, data.shape[a], starts[j], ends[j], step)
        out = np.take(out, first + np.arange(count, dtype=np.int64) * step, axis=a)
    return out


@verifier("Slice", *SLICE)
def _slice_verify(op: OnnxOp):
    for i, name in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")):
        if op.version > 1:
            r = op.rank(op.input(i))
            if r is not None and r != 1:
                op.fail(f"{name} must be 1-D, got rank {r}")
    _slice(op)
