"""Pad: v2 (``pads`` attribute), v11/v13 (``pads`` input), v18+ (``axes``).

``pads`` is [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over the padded
axes; dim k grows by begin_k + end_k (negative pads crop). ``pad_axis`` is
the one computation of a padded axis (shape rule: ints/UNKNOWN; lowering:
run-time pads).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import (const_ints, fmt, int_values, norm_axes,
                                                   single_result)

PAD = (2, 11, 13, 18, 19, 21, 23, 24, 25)
MODES = ("constant", "reflect", "edge", "wrap")


def pad_axis(ctx: D.ShapeChecks, dim, begin, end, mode: str, axis: int):
    """One axis of Pad -> (crop_begin, kept, pad_begin, pad_end, result dim):
    the result is ``x[crop_begin : crop_begin + kept]`` with ``pad_begin`` /
    ``pad_end`` values around it.

    ``constant`` mode means pad first, then crop (onnxruntime): the result
    has ``dim + begin + end >= 0`` elements, element i from x[i - begin] or
    the value, so a crop may also remove padding (size 0 with pads 1, -1
    gives size 0; fuzzer case s2000-164). The other modes read the cropped
    input, which must keep ``dim - crops >= 0`` elements (> 0 to pad)."""
    if mode == "constant":
        if D.is_static(begin) and D.is_static(end) and begin >= 0 and end >= 0:
            return 0, dim, begin, end, dim + begin + end
        out = dim + begin + end
        ctx.require(D.ge(out, 0), f"pads {{0}}, {{1}} give dim {axis} of size {{2}} "
                    "a negative size", begin, end, dim)
        crop_lo = D.dmin(D.dmax(0 - begin, 0), dim)
        kept = D.dmin(D.dmax(dim + end, crop_lo), dim) - crop_lo
        lo = D.dmin(D.dmax(begin, 0), D.dmax(out, 0))
        return crop_lo, kept, lo, out - lo - kept, out
    crop_lo, crop_hi = D.dmax(0 - begin, 0), D.dmax(0 - end, 0)
    kept = dim - crop_lo - crop_hi
    if not (D.is_static(crop_lo) and D.is_static(crop_hi) and crop_lo == crop_hi == 0):
        ctx.require(D.ge(kept, 0), f"pads {{0}}, {{1}} give dim {axis} of size {{2}} "
                    "a negative size", begin, end, dim)
    lo, hi = D.dmax(begin, 0), D.dmax(end, 0)
    none = D.both(D.eq(lo, 0), D.eq(hi, 0))
    if mode == "reflect":
        ctx.require(D.either(none, D.both(D.lt(lo, kept), D.lt(hi, kept))),
                    f"reflect pads {{0}}, {{1}} must be smaller than dim {axis} ({{2}})",
                    lo, hi, kept)
    if mode != "constant":
        ctx.require(D.either(none, D.gt(kept, 0)),
                    f"cannot pad the empty dim {axis} in '{mode}' mode")
    return crop_lo, kept, lo, hi, kept + lo + hi


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
    if mode not in MODES:
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
    ctx = D.inference_checks(op)
    out = D.from_static(s)
    n = len(axes)
    for j, a in enumerate(axes):
        b, e = (None, None) if pads is None else (pads[j], pads[j + n])
        out[a] = pad_axis(ctx, out[a], D.UNKNOWN if b is None else b,
                          D.UNKNOWN if e is None else e, mode, a)[-1]
    return D.to_static(out)


shape_rule("Pad", *PAD)(single_result(_pad))


verifier("Pad", *PAD)(_pad)
