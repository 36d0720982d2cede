"""Pad: v2 (``pads`` attribute), v11/v13 (``pads`` input), v18+ (``axes``).

``pads`` is [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over the padded
axes; dim k grows by begin_k + end_k (negative pads crop).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor
from .common import const_ints, fmt, int_values, known_len, norm_axes

PAD = (2, 11, 13, 18, 19, 21, 23, 24, 25)


def _pad(op: OnnxOp):
    s = op.shape(op.input(0))
    if op.version == 2:
        pads = list(op.attrs.pads)
    else:
        pr = op.rank(op.input(1))
        if pr is not None and pr != 1:
            op.fail(f"pads must be 1-D, got rank {pr}")
        pads = int_values(op.input(1))
    mode = op.attrs.mode
    if mode not in ("constant", "reflect", "edge", "wrap"):
        op.fail(f"mode '{mode}' is not one of constant, reflect, edge, wrap")
    if s is None:
        return None
    r = len(s)
    axes = list(range(r))
    if op.version >= 18 and op.input(3) is not None:
        c = const_ints(op.input(3))
        if c is None:
            return [None] * r
        axes = norm_axes(op, c, r)
    if pads is not None and len(pads) != 2 * len(axes):
        op.fail(f"pads has {len(pads)} elements, expected {2 * len(axes)} "
                f"(2 per padded axis of input {fmt(s)})")
    out = list(s)
    for j, a in enumerate(axes):
        b, e = (None, None) if pads is None else (pads[j], pads[j + len(axes)])
        if s[a] is None or b is None or e is None:
            out[a] = None
            continue
        out[a] = s[a] + b + e
        if out[a] < 0:
            op.fail(f"pads {pads} give dim {a} of input {fmt(s)} the negative size {out[a]}")
    return out


@shape_rule("Pad", *PAD)
def _pad_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_pad(op), et)]


verifier("Pad", *PAD)(_pad)
