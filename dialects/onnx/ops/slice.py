"""Slice: v1 (starts/ends/axes attributes), v10+ (inputs, with steps).

Constant starts/ends clamp as in ONNX (the same as Python slicing); when
they are not constant the sliced dims are dynamic (rank is kept).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor
from .common import const_ints, fmt, known_len, norm_axes

SLICE = (1, 10, 11, 13)


def _params(op: OnnxOp):
    """(starts, ends, axes, steps); each a list or None (= not constant)."""
    if op.version == 1:
        return op.attrs.starts, op.attrs.ends, op.attrs.axes, None
    starts, ends = const_ints(op.input(1)), const_ints(op.input(2))
    axes = const_ints(op.input(3)) if op.input(3) is not None else None
    steps = const_ints(op.input(4)) if op.input(4) is not None else None
    return starts, ends, axes, steps


def _slice(op: OnnxOp):
    s = op.shape(op.input(0))
    starts, ends, axes, steps = _params(op)
    n = None
    if op.version == 1:
        n = len(starts)
        if len(ends) != n:
            op.fail(f"starts has {n} entries but ends has {len(ends)}")
        if axes is not None and len(axes) != n:
            op.fail(f"axes has {len(axes)} entries but starts has {n}")
    else:
        lens = {name: (len(c) if c is not None else known_len(op.input(i)))
                for name, c, i in (("starts", starts, 1), ("ends", ends, 2),
                                   ("axes", axes, 3), ("steps", steps, 4))
                if op.input(i) is not None}
        known = {k: v for k, v in lens.items() if v is not None}
        if len(set(known.values())) > 1:
            op.fail("starts, ends, axes and steps must have the same length, got " +
                    ", ".join(f"{k} {v}" for k, v in known.items()))
        n = next(iter(known.values()), None)
    if steps is not None and 0 in steps:
        op.fail(f"steps {steps} has a 0 step")
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
    out = list(s)
    for j, a in enumerate(ax):
        if starts is None or ends is None or (op.input(4) is not None and steps is None) \
                or s[a] is None:
            out[a] = None
            continue
        step = steps[j] if steps is not None else 1
        out[a] = len(range(*slice(starts[j], ends[j], step).indices(s[a])))
    return out


@shape_rule("Slice", *SLICE)
def _slice_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_slice(op), et)]


@verifier("Slice", *SLICE)
def _slice_verify(op: OnnxOp):
    for i, name in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")):
        if op.version > 1:
            r = op.rank(op.input(i))
            if r is not None and r != 1:
                op.fail(f"{name} must be 1-D, got rank {r}")
    _slice(op)
