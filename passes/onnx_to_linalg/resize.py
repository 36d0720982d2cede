"""Resize (v10, v11, v13, v18, v19) and Upsample (v7, v9, v10).

One linalg.generic over the result: per resized axis the body maps the
result index to a source coordinate (coordinate_transformation_mode, in
f64), picks the taps (nearest: 1 with nearest_mode; linear: 2; cubic: 4,
edge-clamped, exclude_outside), and sums ``tensor.extract`` of the input
times the tap weights. antialias=1 (linear / cubic) widens the kernel by
1 / scale when downsampling (``_AntialiasAxis``: a tap count known at
compile time for constant scales, at run time otherwise; nested scf.for
over the taps, normalized by the weights' sum). Axes that are not resized
read the result index (so a dynamic batch dim passes through). scales,
sizes and roi may be known only at run time (then the result dims are
computed at run time). v10 Resize and Upsample use the asymmetric
transform (nearest: floor when upsampling, ceil when down).

A nearest upsampling by static integer scales whose rounding picks source
index i // k (``_REPEAT_MODES``: YOLO's and torch's 2x Upsample) is instead
one copy generic reading x through ``floordiv`` maps (``_repeat``).
"""
from __future__ import annotations

import itertools

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.resize import scaled_dim
from onnx_mlir_py.passes.onnx_to_linalg import dims_ir
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        is_float)
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np, is_empty, loop_index, norm_axis

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


def _float_elems(op, b, v, n: int, what: str) -> list:
    """The n elements of a 1-D float operand known only at run time, as
    f64 Values (a dynamic length is checked at run time)."""
    t = b.ranked(op, v, what)
    if t.rank != 1:
        op.fail(f"'{what}' must be 1-D, got rank {t.rank}")
    if t.is_dynamic_dim(0):
        ln = dims_ir.IxVal(b.dim(v, 0))
        dims_ir.checks(op, b).require(D.eq(ln, n), f"'{what}' has {{0}} elements, "
                                      f"expected {n}", ln)
    elif t.shape[0] != n:
        op.fail(f"'{what}' has {t.shape[0]} elements, expected {n}")
    f64 = ir.F64Type.get()
    out = []
    for j in range(n):
        e = tensor.extract(v, [b.index(j)])
        out.append(e if e.type == f64 else arith.extf(f64, e))
    return out


def _floor_dim(b, d, s, half: bool = False):
    """floor(d * s [+ 0.5]) as a run-time dim (d: int / IxVal, s: f64 Value)."""
    y = arith.mulf(_f64(b, dims_ir.index_of(d)), s)
    if half:
        y = arith.addf(y, b.const(0.5, ir.F64Type.get()))
    return dims_ir.IxVal(_to_index(math.floor(y)))


def _params(op: OnnxOp, b, x, r: int):
    """Per-axis scale (float, or f64 Value known at run time), roi and the
    result dims (ints / run-time dims; ``scaled_dim`` for constant scales)."""
    ind = b.ixdims(x)
    out = list(ind)
    scales = [1.0] * r
    roi = [(0.0, 1.0)] * r
    axes = list(range(r))
    f64 = ir.F64Type.get()
    chk = dims_ir.checks(op, b)

    def runtime_scales(v):
        for a, sv in zip(axes, _float_elems(op, b, v, len(axes), "scales")):
            b.require(arith.cmpf(F.OGT, sv, b.const(0.0, f64)),
                      f"node '{op.name}' ({op.op_type}): scales must be positive")
            scales[a] = sv
            out[a] = _floor_dim(b, ind[a], sv)

    if op.op_type == "Upsample":
        vals = op.attrs.scales if op.version == 7 else None
        if vals is None:
            c = const_np(op.input(1))
            if c is None:
                runtime_scales(op.input(1))
                return scales, roi, out
            vals = c.reshape(-1).tolist()
        for a, v in zip(axes, vals):
            scales[a] = float(np.float32(v))
            out[a] = scaled_dim(ind[a], v)
        return scales, roi, out
    if op.version >= 18 and op.attrs.axes is not None:
        axes = [norm_axis(op, a, r, "axes") for a in op.attrs.axes]
    si, zi = (1, None) if op.version == 10 else (2, 3)
    sc = None if is_empty(op.input(si)) else op.input(si)
    sz = None if zi is None or is_empty(op.input(zi)) else op.input(zi)
    if sc is not None and sz is not None:
        op.fail("'scales' and 'sizes' must not both be given (or have a static empty shape)")
    if sc is None and sz is None:
        op.fail("one of 'scales' and 'sizes' must be given")
    if sc is not None:
        c = const_np(sc)
        if c is None:
            runtime_scales(sc)
        else:
            for a, v in zip(axes, c.reshape(-1).tolist()):
                scales[a] = float(np.float32(v))
                out[a] = scaled_dim(ind[a], v)
    else:
        sizes = dims_ir.int_elements(op, b, sz, len(axes), "sizes")
        for a, v in zip(axes, sizes):
            chk.require(D.ge(v, 0), f"sizes[{axes.index(a)}] is {{0}}, must be >= 0", v)
        policy = op.attrs.keep_aspect_ratio_policy if op.version >= 18 else "stretch"
        static = all(D.is_static(ind[a]) and D.is_static(v) for a, v in zip(axes, sizes))
        if static:
            ratios = {a: float(v) / int(ind[a]) for a, v in zip(axes, sizes)}
        else:
            ratios = {a: arith.divf(_f64(b, dims_ir.index_of(v)), _f64(b, dims_ir.index_of(ind[a])))
                      for a, v in zip(axes, sizes)}
        if policy == "stretch":
            for a, v in zip(axes, sizes):
                scales[a], out[a] = ratios[a], v
        else:
            vs = list(ratios.values())
            if static:
                sc1 = min(vs) if policy == "not_larger" else max(vs)
            else:
                sc1 = vs[0]
                for w in vs[1:]:
                    sc1 = (arith.minimumf if policy == "not_larger" else arith.maximumf)(sc1, w)
            for a in axes:
                scales[a] = sc1
                out[a] = int(np.floor(int(ind[a]) * sc1 + 0.5)) if static \
                    else _floor_dim(b, ind[a], sc1, half=True)
    if op.version >= 11 and not is_empty(op.input(1)):
        c = const_np(op.input(1))
        n = len(axes)
        if c is None:
            if op.attrs.coordinate_transformation_mode == "tf_crop_and_resize":
                v = _float_elems(op, b, op.input(1), 2 * n, "roi")
                for j, a in enumerate(axes):
                    roi[a] = (v[j], v[j + n])
        else:
            v = c.reshape(-1).tolist()
            if len(v) == 2 * n:
                for j, a in enumerate(axes):
                    roi[a] = (float(v[j]), float(v[j + n]))
    return scales, roi, out


def _f64(b, v):
    """int / float / index Value / f64 Value -> f64 Value."""
    f64 = ir.F64Type.get()
    if isinstance(v, (int, float)):
        return b.const(float(v), f64)
    if isinstance(v.type, ir.IndexType):
        return arith.sitofp(f64, arith.index_cast(ir.IntegerType.get_signless(64), v))
    return v


def _fop(b, fn, pyfn):
    def g(x, y):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            return pyfn(float(x), float(y))
        return fn(_f64(b, x), _f64(b, y))
    return g


def _sel_eq1(b, v, if1, other):
    """``if1`` where the (float or f64 Value) ``v`` is 1, else ``other``."""
    if isinstance(v, (int, float)):
        return if1() if v == 1 else other()
    ok = arith.cmpf(F.OEQ, v, _f64(b, 1.0))
    return arith.select(ok, _f64(b, if1()), _f64(b, other()))


def _coord(b, cfg: _Cfg, i, d_in, d_out, scale, roi):
    """Source coordinate (f64 Value) of result index i (index Value); the
    sizes and scale are Python numbers or run-time (index / f64) Values."""
    add, sub = _fop(b, arith.addf, lambda p, q: p + q), _fop(b, arith.subf, lambda p, q: p - q)
    mul, div = _fop(b, arith.mulf, lambda p, q: p * q), _fop(b, arith.divf, lambda p, q: p / q)
    x = _f64(b, i)
    c = lambda v: _f64(b, v)  # noqa: E731
    ow = mul(scale, d_in)
    m = cfg.ctm
    if m == "asymmetric":
        return div(x, scale)
    if m == "align_corners":
        return c(_sel_eq1(b, ow, lambda: 0.0,
                          lambda: mul(x, div(sub(d_in, 1), sub(ow, 1)))))
    if m == "tf_crop_and_resize":
        lo, hi = roi
        return c(_sel_eq1(b, ow, lambda: add(div(mul(sub(hi, lo), sub(d_in, 1)), 2),
                                             mul(lo, sub(d_in, 1))),
                          lambda: add(mul(x, div(mul(sub(hi, lo), sub(d_in, 1)), sub(ow, 1))),
                                      mul(lo, sub(d_in, 1)))))
    base = sub(div(add(x, 0.5), scale), 0.5)
    if m == "pytorch_half_pixel":
        return c(_sel_eq1(b, ow, lambda: -0.5, lambda: base))
    if m == "tf_half_pixel_for_nearest":
        return c(div(add(x, 0.5), scale))
    if m == "half_pixel_symmetric":
        off = mul(div(d_in, 2), sub(1, div(d_out, ow)))
        return c(add(base, off))
    return c(base)  # half_pixel


def _clamp(b, j, d):
    hi = b.index(d - 1) if isinstance(d, int) else arith.subi(d, b.index(1))
    return arith.minsi(arith.maxsi(j, b.index(0)), hi)


def _to_index(x):
    from mlir.dialects import arith as a
    return a.index_cast(ir.IndexType.get(), a.fptosi(ir.IntegerType.get_signless(64), x))


def _cubic_far(b, a: float, t):
    """Keys' cubic kernel for |t| in [1, 2) (f64)."""
    c = lambda v: b.const(v, ir.F64Type.get())  # noqa: E731
    return arith.subf(arith.mulf(arith.addf(arith.mulf(arith.subf(arith.mulf(c(a), t),
                                                                  c(5 * a)), t), c(8 * a)), t),
                      c(4 * a))


def _cubic_near(b, a: float, t):
    """Keys' cubic kernel for |t| in [0, 1] (f64)."""
    c = lambda v: b.const(v, ir.F64Type.get())  # noqa: E731
    return arith.addf(arith.mulf(arith.mulf(arith.subf(arith.mulf(c(a + 2), t), c(a + 3)),
                                            t), t), c(1.0))


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
            if isinstance(scale, float):
                y = fl if scale >= 1 else math.ceil(x)
            else:
                y = arith.select(arith.cmpf(F.OGE, scale, b.const(1.0, f64)), fl, math.ceil(x))
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
    one = c(1.0)
    near, far = (lambda t: _cubic_near(b, a, t)), (lambda t: _cubic_far(b, a, t))
    ws = [far(arith.addf(r, one)), near(r), near(arith.subf(one, r)),
          far(arith.subf(c(2.0), r))]
    base = _to_index(xi)
    idx = [arith.addi(base, b.index(o)) for o in (-1, 0, 1, 2)]
    if cfg.exclude:
        zero = c(0.0)
        inside = [arith.andi(arith.cmpi(arith.CmpIPredicate.sge, j, b.index(0)),
                             arith.cmpi(arith.CmpIPredicate.slt, j, b.as_index(d))) for j in idx]
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
    scales, roi, out = _params(op, b, x, r)
    if len(scales) != r:
        op.fail(f"scales has {len(scales)} entries for rank {r}")
    antialias = op.op_type == "Resize" and op.version >= 18 and op.attrs.antialias != 0 and \
        cfg.mode != "nearest"
    ind = [dims_ir.index_of(d) for d in b.ixdims(x)]
    dims = [dims_ir.index_of(d) for d in dims_ir.fit_result(op, b, out)]
    resized = [k for k in range(r)
               if not (isinstance(scales[k], float) and scales[k] == 1.0 and
                       all(isinstance(v, float) for v in roi[k]) and roi[k] == (0.0, 1.0) and
                       (not isinstance(ind[k], int) or ind[k] == dims[k]))]
    f64 = ir.F64Type.get()
    reps = _integer_nearest(cfg, resized, scales, roi, ind, dims, antialias)
    if reps is not None:
        return [_repeat(b, x, reps, dims, et)]

    def body(_o):
        taps, outside = [], None
        for k in range(r):
            i = loop_index(k)
            if k not in resized:
                taps.append([(i, None)])
                continue
            xc = _coord(b, cfg, i, ind[k], dims[k], scales[k], roi[k])
            if cfg.ctm == "tf_crop_and_resize":
                bad = arith.ori(arith.cmpf(F.OLT, xc, b.const(0.0, f64)),
                                arith.cmpf(F.OGT, xc, arith.subf(_f64(b, ind[k]),
                                                                 b.const(1.0, f64))))
                outside = bad if outside is None else arith.ori(outside, bad)
            taps.append(_AntialiasAxis(b, cfg, k, xc, ind[k], scales[k]) if antialias
                        else _taps(b, cfg, xc, ind[k], scales[k]))
        if antialias:
            acc = _antialias_sum(b, cfg, x, taps)
        else:
            acc = _tap_sum(b, x, taps)
        if is_float(acc.type) and acc.type != et:
            acc = convert_scalar(acc, False, et)
        if outside is not None:
            acc = arith.select(outside, b.const(cfg.extrap, et), acc)
        return acc
    return [b.generic([], [b.empty(dims, et)], [affine_map(r, list(range(r)))],
                      ["parallel"] * r, body)[0]]


# (coordinate_transformation_mode, nearest_mode) pairs whose nearest source
# index of result index i is exactly i // k for an integer scale k (result =
# k x input): asymmetric maps i = q*k + r to q + r/k (floor: q; "legacy" is
# floor when upsampling); the half-pixel modes map it to q + (r + 0.5)/k - 0.5,
# strictly inside (q - 0.5, q + 0.5), so either rounding gives q
# (half_pixel_symmetric's offset is 0 at result = k x input,
# pytorch_half_pixel is half_pixel for a result of 2+).
_REPEAT_MODES = {("asymmetric", "floor"), ("asymmetric", "legacy")} | {
    (c, n) for c in ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel")
    for n in ("round_prefer_floor", "round_prefer_ceil")}


def _integer_nearest(cfg: _Cfg, resized, scales, roi, ind, dims, antialias: bool):
    """Per-axis repeat counts when the resize is a nearest upsampling by
    static integer scales (every result element a copy of x[i // k]), else
    None."""
    if cfg.mode != "nearest" or antialias or (cfg.ctm, cfg.nearest) not in _REPEAT_MODES \
            or not resized:
        return None
    reps = [1] * len(dims)
    for a in resized:
        sc, d_in, d_out = scales[a], ind[a], dims[a]
        if not (isinstance(sc, float) and isinstance(d_in, int) and isinstance(d_out, int)):
            return None
        k = int(sc)
        if k < 2 or float(k) != sc or d_out != k * d_in:
            return None
        reps[a] = k
    return reps


def _repeat(b, x, reps: list, dims: list, et) -> ir.Value:
    """result[.., i, ..] = x[.., i // k, ..] for the per-axis repeats ``reps``:
    one copy generic over the result reading x through floordiv maps, not a
    source coordinate in f64 and a ``tensor.extract`` per element (YOLO's
    nearest 2x upsample of 128x20x20 with its Concat, one thread: 0.367 ->
    0.263 ms thread CPU)."""
    n = len(dims)
    D = ir.AffineDimExpr.get
    src = [ir.AffineExpr.get_floor_div(D(a), ir.AffineConstantExpr.get(k)) if k > 1 else D(a)
           for a, k in enumerate(reps)]
    return b.generic([x], [b.empty(dims, et)], [ir.AffineMap.get(n, 0, src),
                                                affine_map(n, list(range(n)))],
                     ["parallel"] * n, lambda v, _o: v)[0]


def _tap_sum(b, x, taps):
    """sum over the tensor product of the per-axis taps of the weights'
    product times x (f64), or the one tap's value for nearest."""
    f64 = ir.F64Type.get()
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
    return acc


class _AntialiasAxis:
    """An antialiased (linear / cubic) resized axis, as onnx.reference's
    ``_linear_coeffs_antialias`` / ``_cubic_coeffs_antialias``: with
    s = min(scale, 1) the kernel (support h = 1 linear, 2 cubic) is widened
    by 1 / s: taps j in [start, start + n), start = floor(-h / s) + 1,
    n = 2 - 2 * start, at index x_int + j (edge-clamped; x_int = ceil(x) - 1,
    ratio = x - x_int in (0, 1]) with weight kernel(s * (j - ratio)),
    normalized by their sum. A run-time scale gives a run-time tap count."""

    def __init__(self, b, cfg: _Cfg, dim: int, x, d_in, scale):
        f64 = ir.F64Type.get()
        h = 1.0 if cfg.mode == "linear" else 2.0
        self.dim, self.d_in = dim, d_in
        if isinstance(scale, float):
            s = min(scale, 1.0)
            start = int(np.floor(-h / s) + 1)
            self.n, self.start, self.s = 2 - 2 * start, b.const(float(start), f64), b.const(s, f64)
        else:
            self.s = arith.minimumf(scale, b.const(1.0, f64))
            self.start = arith.addf(math.floor(arith.divf(b.const(-h, f64), self.s)),
                                    b.const(1.0, f64))
            self.n = _to_index(arith.subf(b.const(2.0, f64),
                                          arith.mulf(b.const(2.0, f64), self.start)))
        self.xi = arith.subf(math.ceil(x), b.const(1.0, f64))
        self.ratio = arith.subf(x, self.xi)

    def tap(self, b, cfg: _Cfg, k):
        """(index Value, f64 weight) of tap k (index Value)."""
        f64 = ir.F64Type.get()
        j = arith.addf(self.start, _f64(b, k))
        t = math.absf(arith.mulf(self.s, arith.subf(j, self.ratio)))
        zero, one = b.const(0.0, f64), b.const(1.0, f64)
        if cfg.mode == "linear":
            w = arith.maximumf(arith.subf(one, t), zero)
        else:
            w = arith.select(arith.cmpf(F.OLE, t, one), _cubic_near(b, cfg.cubic_a, t),
                             arith.select(arith.cmpf(F.OLT, t, b.const(2.0, f64)),
                                          _cubic_far(b, cfg.cubic_a, t), zero))
        i = _to_index(arith.addf(self.xi, j))
        if cfg.exclude:
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, i, b.index(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, i, b.as_index(self.d_in)))
            w = arith.select(inside, w, zero)
        return _clamp(b, i, self.d_in), w


def _antialias_sum(b, cfg: _Cfg, x, taps):
    """sum_taps w * x / sum_taps w over the antialiased axes' taps (nested
    scf.for: the tap counts may be run-time values); the other axes read
    their one tap. The weights are separable, so normalizing by the sum of
    the products normalizes each axis (exclude_outside: after zeroing the
    taps outside; all outside gives 0, as onnx.reference)."""
    f64 = ir.F64Type.get()
    aa = [t for t in taps if isinstance(t, _AntialiasAxis)]

    def inner(ks, carried):
        acc, wsum = carried
        idx = [None if isinstance(t, _AntialiasAxis) else t[0][0] for t in taps]
        w = None
        for a, k in zip(aa, ks):
            idx[a.dim], wk = a.tap(b, cfg, k)
            w = wk if w is None else arith.mulf(w, wk)
        v = convert_scalar(tensor.extract(x, idx), False, f64)
        return [arith.addf(acc, arith.mulf(v, w)), arith.addf(wsum, w)]
    zero = b.const(0.0, f64)
    acc, wsum = for_nest(b, [a.n for a in aa], [zero, zero], inner)
    safe = arith.select(arith.cmpf(F.OEQ, wsum, zero), b.const(1.0, f64), wsum)
    return arith.divf(acc, safe)


lowering("Resize", 10, 11, 13, 18, 19)(lower_resize_like)
lowering("Upsample", 7, 9, 10)(lower_resize_like)
