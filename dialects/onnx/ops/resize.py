"""Resize (v10: scales; v11+: roi, scales, sizes; v18+: axes,
keep_aspect_ratio_policy) and Upsample (v7 scales attribute, v9+ input).

Output dim = floor(input dim * scale), or sizes when given; unknown scales
or sizes keep the rank with dynamic dims. antialias=1 (v18+) needs mode
linear or cubic (onnxruntime refuses nearest; onnx.reference too).
"""
from __future__ import annotations

import math

import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.dims import from_static, to_static
from onnx_mlir_py.dialects.onnx.ops.common import (const_value, fmt, known_len, norm_axes,
                                                   single_result)

RESIZE = (10, 11, 13, 18, 19)
UPSAMPLE = (7, 9, 10)


def scaled_dim(d, scale: float):
    """floor(d * scale) for a constant f32 ``scale`` on any dim (int,
    UNKNOWN or a run-time value): the f32 is an exact ratio p / q, so it is
    (d * p) // q in integer arithmetic, equal to the float product."""
    p, q = float(np.float32(scale)).as_integer_ratio()
    return (d * p) // q


def _present(op: OnnxOp, i: int) -> bool:
    """An optional input is absent when missing or an empty tensor."""
    v = op.input(i)
    if v is None:
        return False
    n = known_len(v)
    return n != 0


def _resize(op: OnnxOp):
    s = op.shape(op.input(0))
    if op.version == 10:
        scales_i, sizes_i = 1, None
    else:
        scales_i, sizes_i = 2, 3
    has_scales = _present(op, scales_i)
    has_sizes = sizes_i is not None and _present(op, sizes_i)
    if has_scales and has_sizes and op.input(scales_i) is not None and \
            known_len(op.input(scales_i)) is not None:
        op.fail("only one of 'scales' and 'sizes' can be given")
    if op.version >= 11 and not has_scales and not has_sizes:
        op.fail("one of 'scales' and 'sizes' must be given")
    if op.version >= 18 and op.attrs.antialias != 0:
        if op.attrs.antialias != 1:
            op.fail(f"attribute 'antialias' = {op.attrs.antialias}: expected 0 or 1")
        if op.attrs.mode not in ("linear", "cubic"):
            op.fail(f"antialias=1 needs mode 'linear' or 'cubic', got '{op.attrs.mode}' "
                    "(as onnxruntime)")
    if s is None:
        return None
    r = len(s)
    axes = list(range(r))
    if op.version >= 18 and op.attrs.axes is not None:
        axes = norm_axes(op, op.attrs.axes, r)
    which = sizes_i if has_sizes else scales_i
    what = "sizes" if has_sizes else "scales"
    n = known_len(op.input(which))
    if n is not None and n != len(axes):
        op.fail(f"{what} has {n} elements, expected {len(axes)} "
                f"(input {fmt(s)}{', axes ' + str(axes) if len(axes) != r else ''})")
    c = const_value(op.input(which))
    out = list(s)
    if c is None:
        for a in axes:
            out[a] = None
        return out
    vals = np.asarray(c).reshape(-1)
    if has_sizes and any(int(v) < 0 for v in vals):
        op.fail(f"sizes {[int(v) for v in vals]} has a negative value")
    if has_sizes:
        policy = op.attrs.keep_aspect_ratio_policy if op.version >= 18 else "stretch"
        if policy == "stretch":
            for a, v in zip(axes, vals):
                out[a] = int(v)
            return out
        if any(s[a] is None for a in axes):
            for a in axes:
                out[a] = None
            return out
        ratios = [float(v) / s[a] for a, v in zip(axes, vals)]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        for a in axes:
            out[a] = int(math.floor(s[a] * scale + 0.5))
        return out
    if any(float(v) <= 0 for v in vals):
        op.fail(f"scales {[float(v) for v in vals]} must be positive")
    for a, v in zip(axes, vals):
        out[a] = to_static([scaled_dim(from_static([s[a]])[0], float(v))])[0]
    return out


shape_rule("Resize", *RESIZE)(single_result(_resize))


verifier("Resize", *RESIZE)(_resize)


def _upsample(op: OnnxOp):
    s = op.shape(op.input(0))
    if op.version == 7:
        scales = op.attrs.scales
    else:
        c = const_value(op.input(1))
        scales = None if c is None else [float(x) for x in np.asarray(c).reshape(-1)]
        n = known_len(op.input(1))
        if s is not None and n is not None and n != len(s):
            op.fail(f"scales has {n} elements, expected one per input dim {fmt(s)}")
    if scales is not None:
        if s is not None and len(scales) != len(s):
            op.fail(f"scales has {len(scales)} elements, expected one per input dim {fmt(s)}")
        if any(x < 1 for x in scales):
            op.fail(f"scales {list(scales)} must be >= 1")
    if s is None:
        return None
    if scales is None:
        return [None] * len(s)
    return [None if d is None else int(math.floor(d * float(np.float32(x))))
            for d, x in zip(s, scales)]


shape_rule("Upsample", *UPSAMPLE)(single_result(_upsample))


verifier("Upsample", *UPSAMPLE)(_upsample)
