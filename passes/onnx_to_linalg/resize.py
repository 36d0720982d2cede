"""Resize (v10, v11, v13, v18, v19) and Upsample (v7, v9, v10).

One linalg.generic over the result: per resized axis the body maps the
result index to a source coordinate (coordinate_transformation_mode, in
f64), picks the taps (nearest: 1 with nearest_mode; linear: 2; cubic: 4,
edge-clamped, exclude_outside), and sums ``tensor.extract`` of the input
times the tap weights. Axes that are not resized read the result index
(so a dynamic batch dim passes through). scales/sizes/roi must be
constants; resized dims must be static. v10 Resize and Upsample use the
asymmetric transform (nearest: floor when upsampling, ceil when down).
"""
from __future__ import annotations

import itertools

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, convert_scalar, is_float
from .tensor_util import const_np, is_empty, loop_index, norm_axis

F = arith.CmpFPredicate
CTMS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nearest", "tf_crop_and_resize")


class _Cfg:
    mode = "nearest"
    ctm = "asymmetric"
    nearest = "legacy"  # floor when upsampling, ceil when downsampling
    cubic_a = -0.75
    exclude = False
    extrap = 0.0


def _attrs(op: OnnxOp) -> _Cfg:
    c = _Cfg()
    c.mode = op.attrs.mode
    if op.op_type == "Resize" and op.version >= 11:
        c.ctm = op.attrs.coordinate_transformation_mode
        c.nearest = op.attrs.nearest_mode
        c.cubic_a = op.attrs.cubic_coeff_a
        c.exclude = bool(op.attrs.exclude_outside)
        c.extrap = op.attrs.extrapolation_value
    if c.mode in ("bilinear", "trilinear"):  # Upsample spelling
        c.mode = "linear"
    if c.mode not in ("nearest", "linear", "cubic"):
        op.fail(f"mode '{c.mode}' is not supported")
    if c.ctm not in CTMS:
        op.fail(f"coordinate_transformation_mode '{c.ctm}' is not supported")
    return c


def _params(op: OnnxOp, r: int, in_shape: list, out_shape: list):
    """Per-axis (scale, roi_lo, roi_hi) as Python floats."""
    scales = [1.0] * r
    roi = [(0.0, 1.0)] * r
    axes = list(range(r))
    if op.op_type == "Upsample":
        vals = op.attrs.scales if op.version == 7 else None
        if vals is None:
            c = const_np(op.input(1))
            if c is None:
                op.fail("'scales' must be a constant")
            vals = c.reshape(-1).tolist()
        return [float(np.float32(v)) for v in vals], roi
    if op.version >= 18 and op.attrs.axes is not None:
        axes = [norm_axis(op, a, r, "axes") for a in op.attrs.axes]
    si, zi = (1, None) if op.version == 10 else (2, 3)
    sc = None if is_empty(op.input(si)) else const_np(op.input(si))
    sz = None if zi is None or is_empty(op.input(zi)) else const_np(op.input(zi))
    if sc is None and sz is None:
        op.fail("'scales' or 'sizes' must be a constant")
    if sc is not None:
        for a, v in zip(axes, sc.reshape(-1).tolist()):
            scales[a] = float(np.float32(v))
    else:
        policy = op.attrs.keep_aspect_ratio_policy if op.version >= 18 else "stretch"
        for a in axes:
            if in_shape[a] is None:
                op.fail(f"resized dim {a} must be static")
        ratios = {a: float(v) / in_shape[a] for a, v in zip(axes, sz.reshape(-1).tolist())}
        if policy != "stretch":
            s = min(ratios.values()) if policy == "not_larger" else max(ratios.values())
            ratios = {a: s for a in axes}
        for a in axes:
            scales[a] = ratios[a]
    if op.version >= 11 and not is_empty(op.input(1)):
        c = const_np(op.input(1))
        if c is not None:
            v = c.reshape(-1).tolist()
            n = len(axes)
            if len(v) == 2 * n:
                for j, a in enumerate(axes):
                    roi[a] = (float(v[j]), float(v[j + n]))
    return scales, roi


def _coord(b, cfg: _Cfg, i, d_in: int, d_out: int, scale: float, roi):
    """Source coordinate (f64 Value) of result index i (index Value)."""
    f64 = ir.F64Type.get()
    x = arith.sitofp(f64, arith.index_cast(ir.IntegerType.get_signless(64), i))

    def c(v):
        return b.const(v, f64)
    ow = scale * d_in
    m = cfg.ctm
    if m == "asymmetric":
        return arith.divf(x, c(scale))
    if m == "align_corners":
        return c(0.0) if ow == 1 else arith.mulf(x, c((d_in - 1) / (ow - 1)))
    if m == "tf_crop_and_resize":
        lo, hi = roi
        if ow == 1:
            return c((hi - lo) * (d_in - 1) / 2 + lo * (d_in - 1))
        return arith.addf(arith.mulf(x, c((hi - lo) * (d_in - 1) / (ow - 1))),
                          c(lo * (d_in - 1)))
    if m == "pytorch_half_pixel" and ow == 1:
        return c(-0.5)
    base = arith.subf(arith.divf(arith.addf(x, c(0.5)), c(scale)), c(0.5))
    if m == "tf_half_pixel_for_nearest":
        return arith.divf(arith.addf(x, c(0.5)), c(scale))
    if m == "half_pixel_symmetric":
        off = (d_in / 2) * (1 - d_out / ow)
        return arith.addf(base, c(off))
    return base  # half_pixel, pytorch_half_pixel


def _clamp(b, j, d: int):
    return arith.minsi(arith.maxsi(j, b.index(0)), b.index(d - 1))


def _to_index(x):
    from mlir.dialects import arith as a
    return a.index_cast(ir.IndexType.get(), a.fptosi(ir.IntegerType.get_signless(64), x))


def _taps(b, cfg: _Cfg, x, d: int, scale: float):
    """[(index Value, f64 weight Value or None)] for one axis."""
    f64 = ir.F64Type.get()
    if cfg.mode == "nearest":
        fl = math.floor(x)
        if cfg.nearest == "floor":
            y = fl
        elif cfg.nearest == "ceil":
            y = math.ceil(x)
        elif cfg.nearest == "legacy":
            y = fl if scale >= 1 else math.ceil(x)
        else:
            r = arith.subf(x, fl)
            pred = F.OGT if cfg.nearest == "round_prefer_floor" else F.OGE
            up = arith.cmpf(pred, r, b.const(0.5, f64))
            y = arith.select(up, arith.addf(fl, b.const(1.0, f64)), fl)
        return [(_clamp(b, _to_index(y), d), None)]
    if cfg.mode == "linear":
        fl = math.floor(x)
        w = arith.subf(x, fl)
        i0 = _to_index(fl)
        i1 = arith.addi(i0, b.index(1))
        return [(_clamp(b, i0, d), arith.subf(b.const(1.0, f64), w)), (_clamp(b, i1, d), w)]
    # cubic: x_int = ceil(x) - 1, ratio in (0, 1]
    xi = arith.subf(math.ceil(x), b.const(1.0, f64))
    r = arith.subf(x, xi)
    a = cfg.cubic_a

    def c(v):
        return b.const(v, f64)

    def far(t):  # |t| in [1, 2)
        return arith.subf(arith.mulf(arith.addf(arith.mulf(arith.subf(arith.mulf(c(a), t),
                                                                      c(5 * a)), t), c(8 * a)), t),
                          c(4 * a))

    def near(t):  # |t| in [0, 1]
        return arith.addf(arith.mulf(arith.mulf(arith.subf(arith.mulf(c(a + 2), t), c(a + 3)),
                                                t), t), c(1.0))
    one = c(1.0)
    ws = [far(arith.addf(r, one)), near(r), near(arith.subf(one, r)),
          far(arith.subf(c(2.0), r))]
    base = _to_index(xi)
    idx = [arith.addi(base, b.index(o)) for o in (-1, 0, 1, 2)]
    if cfg.exclude:
        zero = c(0.0)
        inside = [arith.andi(arith.cmpi(arith.CmpIPredicate.sge, j, b.index(0)),
                             arith.cmpi(arith.CmpIPredicate.slt, j, b.index(d))) for j in idx]
        ws = [arith.select(ok, w, zero) for ok, w in zip(inside, ws)]
        tot = arith.addf(arith.addf(ws[0], ws[1]), arith.addf(ws[2], ws[3]))
        ws = [arith.divf(w, tot) for w in ws]
    return [(_clamp(b, j, d), w) for j, w in zip(idx, ws)]


def lower_resize_like(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    t = b.result_type(op)
    et = t.element_type
    cfg = _attrs(op)
    if cfg.mode != "nearest" and not is_float(et):
        op.fail(f"{cfg.mode} mode needs a float input")
    in_shape = [None if x.type.is_dynamic_dim(k) else x.type.shape[k] for k in range(r)]
    out_shape = [None if t.is_dynamic_dim(k) else t.shape[k] for k in range(r)]
    scales, roi = _params(op, r, in_shape, out_shape)
    if len(scales) != r:
        op.fail(f"scales has {len(scales)} entries for rank {r}")
    if op.op_type == "Resize" and op.version >= 18 and op.attrs.antialias and \
            cfg.mode != "nearest" and any(s < 1 for s in scales):
        op.fail("antialias=1 when downsampling is not supported")
    resized = []
    for k in range(r):
        same = scales[k] == 1.0 and in_shape[k] == out_shape[k] and \
            roi[k] == (0.0, 1.0)
        if not same:
            if in_shape[k] is None or out_shape[k] is None:
                op.fail(f"resized dim {k} must be static")
            resized.append(k)
    dims = b.out_dims(op, 0, lambda k: b.dim(x, k))
    f64 = ir.F64Type.get()

    def body(_o):
        taps, outside = [], None
        for k in range(r):
            i = loop_index(k)
            if k not in resized:
                taps.append([(i, None)])
                continue
            xc = _coord(b, cfg, i, in_shape[k], out_shape[k], scales[k], roi[k])
            if cfg.ctm == "tf_crop_and_resize":
                bad = arith.ori(arith.cmpf(F.OLT, xc, b.const(0.0, f64)),
                                arith.cmpf(F.OGT, xc, b.const(in_shape[k] - 1.0, f64)))
                outside = bad if outside is None else arith.ori(outside, bad)
            taps.append(_taps(b, cfg, xc, in_shape[k], scales[k]))
        acc = None
        for combo in itertools.product(*taps):
            v = tensor.extract(x, [j for j, _ in combo])
            ws = [w for _, w in combo if w is not None]
            if not ws:
                acc = v
                continue
            w = ws[0]
            for o in ws[1:]:
                w = arith.mulf(w, o)
            term = arith.mulf(convert_scalar(v, False, f64), w)
            acc = term if acc is None else arith.addf(acc, term)
        if is_float(acc.type) and acc.type != et:
            acc = convert_scalar(acc, False, et)
        if outside is not None:
            acc = arith.select(outside, b.const(cfg.extrap, et), acc)
        return acc
    return [b.generic([], [b.empty(dims, et)], [affine_map(r, list(range(r)))],
                      ["parallel"] * r, body)[0]]


lowering("Resize", 10, 11, 13, 18, 19)(lower_resize_like)
lowering("Upsample", 7, 9, 10)(lower_resize_like)
