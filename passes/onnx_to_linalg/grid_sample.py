"""GridSample and AffineGrid -> one linalg.generic over the result each.

GridSample: per result element and spatial dim i (grid component r-1-i)
the body denormalizes the grid value (align_corners), rounds it half to
even (nearest), brings a coordinate past the borders back (border: clamp,
reflection: reflect by the borders), then takes the taps (nearest 1,
linear 2, cubic 4 with a = -0.75) and sums the tensor product of the taps
read with ``tensor.extract`` (zeros padding: a tap outside X reads 0;
border/reflection: the tap index is clamped/reflected). Coordinates and
weights are computed in f32 (f64 when X or grid is f64), as onnx.reference
does; the result is converted back to X's type.

AffineGrid: result[n, d1..dr, k] = sum_j theta[n, k, j] * base_j with
base = (x_Dr, .., x_D1, 1), x_D(i) = linspace of the normalized grid.
"""
from __future__ import annotations

import itertools

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.grid_sample import grid_sample_dims, grid_sample_mode
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

F = arith.CmpFPredicate
I = arith.CmpIPredicate


class _F:
    """Scalar float arithmetic in one compute type."""

    def __init__(self, b: LoweringContext, ct: ir.Type):
        self.b, self.ct = b, ct

    def c(self, v: float) -> ir.Value:
        return self.b.const(float(v), self.ct)

    def of_index(self, i: ir.Value) -> ir.Value:
        return arith.sitofp(self.ct, arith.index_cast(ir.IntegerType.get_signless(64), i))

    def to_index(self, x: ir.Value) -> ir.Value:
        return arith.index_cast(ir.IndexType.get(),
                                arith.fptosi(ir.IntegerType.get_signless(64), x))

    def clamp(self, x, lo, hi):
        return arith.minimumf(arith.maximumf(x, lo), hi)

    def reflect(self, x, lo, hi):
        """onnx.reference's _gs_reflect: fold x into [lo, hi] by the near border."""
        rng = arith.subf(hi, lo)
        safe = arith.select(arith.cmpf(F.OGT, rng, self.c(0)), rng, self.c(1))
        below = arith.cmpf(F.OLT, x, lo)
        dx = arith.select(below, arith.subf(lo, x), arith.subf(x, hi))
        n = math.floor(arith.divf(dx, safe))
        r = arith.subf(dx, arith.mulf(n, safe))
        even = arith.cmpf(F.OEQ, arith.subf(n, arith.mulf(self.c(2), math.floor(
            arith.divf(n, self.c(2))))), self.c(0))
        near, far = (lo, hi)
        lo_side = arith.select(even, arith.addf(near, r), arith.subf(far, r))
        hi_side = arith.select(even, arith.subf(far, r), arith.addf(near, r))
        folded = arith.select(below, lo_side, hi_side)
        inside = arith.andi(arith.cmpf(F.OGE, x, lo), arith.cmpf(F.OLE, x, hi))
        out = arith.select(inside, x, folded)
        return arith.select(arith.cmpf(F.OGT, rng, self.c(0)), out, lo)


def _cubic_weights(f: _F, t):
    a = -0.75

    def far(x):   # |x| in [1, 2)
        return arith.subf(arith.mulf(arith.addf(arith.mulf(arith.subf(
            arith.mulf(f.c(a), x), f.c(5 * a)), x), f.c(8 * a)), x), f.c(4 * a))

    def near(x):  # |x| in [0, 1]
        return arith.addf(arith.mulf(arith.mulf(arith.subf(
            arith.mulf(f.c(a + 2), x), f.c(a + 3)), x), x), f.c(1))
    one = f.c(1)
    return [far(arith.addf(t, one)), near(t), near(arith.subf(one, t)),
            far(arith.subf(f.c(2), t))]


def _axis_taps(f: _F, mode, pad, align, g, length):
    """[(index, weight or None, valid i1 or None)] along one spatial dim:
    g the grid value (compute type), length the dim (index Value)."""
    b = f.b
    L = f.of_index(length)
    if align:
        x = arith.mulf(arith.divf(arith.addf(g, f.c(1)), f.c(2)), arith.subf(L, f.c(1)))
        lo, hi = f.c(0), arith.subf(L, f.c(1))
    else:
        x = arith.divf(arith.subf(arith.mulf(arith.addf(g, f.c(1)), L), f.c(1)), f.c(2))
        lo, hi = f.c(-0.5), arith.subf(L, f.c(0.5))
    if mode == "nearest":
        x = math.roundeven(x)
    return pixel_taps(f, mode, pad, x, length, lo, hi)


def pixel_taps(f: _F, mode, pad, x, length, lo=None, hi=None):
    """[(index, weight or None, valid i1 or None)] of the pixel coordinate x
    (compute type) along a dim of ``length`` (index Value); lo / hi: the
    borders of 'border' / 'reflection' padding. With 'zeros' a tap outside
    [0, length - 1] is invalid (reads 0); DeformConv samples this way."""
    b = f.b
    L = f.of_index(length)
    if pad == "border":     # only a coordinate past the borders is clamped
        inside = arith.andi(arith.cmpf(F.OGE, x, lo), arith.cmpf(F.OLE, x, hi))
        x = arith.select(inside, x, f.clamp(x, f.c(0), arith.subf(L, f.c(1))))
    elif pad == "reflection":
        x = f.reflect(x, lo, hi)
    last = arith.subi(length, b.index(1))

    def tap(i_float, w):
        """The pixel index of an integral coordinate, with padding."""
        if pad == "zeros":
            ok = arith.andi(arith.cmpf(F.OGE, i_float, f.c(0)),
                            arith.cmpf(F.OLE, i_float, arith.subf(L, f.c(1))))
            i = f.to_index(f.clamp(i_float, f.c(0), arith.subf(L, f.c(1))))
            return i, w, ok
        if pad == "reflection":
            i_float = f.reflect(i_float, lo, hi)
        i = f.to_index(i_float)
        return arith.minsi(arith.maxsi(i, b.index(0)), last), w, None
    if mode == "nearest":
        # onnx.reference truncates the (already integral) coordinate
        return [tap(arith.select(arith.cmpf(F.OLT, x, f.c(0)), math.ceil(x), math.floor(x)),
                    None)]
    x0 = math.floor(x)
    t = arith.subf(x, x0)
    if mode == "linear":
        return [tap(x0, arith.subf(f.c(1), t)), tap(arith.addf(x0, f.c(1)), t)]
    ws = _cubic_weights(f, t)
    return [tap(arith.addf(x0, f.c(o)), w) for o, w in zip((-1, 0, 1, 2), ws)]


def _all_valid(combo):
    ok = None
    for _, _, oi in combo:
        if oi is not None:
            ok = oi if ok is None else arith.andi(ok, oi)
    return ok


def tap_sum(f: _F, x: ir.Value, lead: list, axes: list, uns: bool) -> ir.Value:
    """sum over the tensor product of the per-axis taps (``pixel_taps``) of
    w_1 * .. * w_r * x[lead..., i_1, .., i_r] in the compute type; a tap
    combination with an invalid index adds 0."""
    acc = None
    for combo in itertools.product(*axes):
        v = convert_scalar(tensor.extract(x, [*lead, *[t[0] for t in combo]]), uns, f.ct)
        w = None
        for _, wi, _ in combo:
            w = wi if w is None else arith.mulf(w, wi)
        term = arith.mulf(v, w)
        ok = _all_valid(combo)
        if ok is not None:
            term = arith.select(ok, term, f.c(0))
        acc = term if acc is None else arith.addf(acc, term)
    return acc


@lowering("GridSample", 16, 20, 22)
def lower_grid_sample(op: OnnxOp, b: LoweringContext):
    x, grid = op.input(0), op.input(1)
    rx, rg = b.ranked(op, x).rank, b.ranked(op, grid).rank
    if rx != rg or rx < 3:
        op.fail("X and grid must have the same rank >= 3")
    mode, pad, align = grid_sample_mode(op), op.attrs.padding_mode, op.attrs.align_corners == 1
    xt, gt = x.type.element_type, grid.type.element_type
    if not is_float(xt) and mode != "nearest":
        op.fail(f"mode '{op.attrs.mode}' needs a floating-point X (got {xt})")
    if not is_float(gt):
        op.fail(f"grid must be floating-point (got {gt})")
    f64 = ir.F64Type.get()
    ct = f64 if f64 in (xt, gt) else ir.F32Type.get()
    f = _F(b, ct)
    r = rx - 2
    out = grid_sample_dims(checks(op, b), b.ixdims(x), b.ixdims(grid))
    out_dims = [index_of(d) for d in out]
    xdims = [b.as_index(b.dim(x, 2 + i)) for i in range(r)]
    uns = b.unsigned(x)

    def body(_o):
        ivs = [loop_index(k) for k in range(rx)]
        axes = []
        for i in range(r):
            g = tensor.extract(grid, [ivs[0], *ivs[2:], b.index(r - 1 - i)])
            if g.type != ct:
                g = arith.extf(ct, g) if ct.width > g.type.width else arith.truncf(ct, g)
            axes.append(_axis_taps(f, mode, pad, align, g, xdims[i]))
        if mode == "nearest":   # one tap
            combo = [a[0] for a in axes]
            v = tensor.extract(x, [ivs[0], ivs[1], *[t[0] for t in combo]])
            ok = _all_valid(combo)
            zero = b.const(0.0 if is_float(xt) else 0, xt)
            return v if ok is None else arith.select(ok, v, zero)
        return convert_scalar(tap_sum(f, x, [ivs[0], ivs[1]], axes, uns), False, xt, uns)
    init = b.empty(out_dims, xt)
    y = b.generic([], [init], [affine_map(rx, list(range(rx)))], ["parallel"] * rx, body)[0]
    return [b.cast_to(y, b.result_type(op))]


@lowering("AffineGrid", 20)
def lower_affine_grid(op: OnnxOp, b: LoweringContext):
    theta, size = op.input(0), op.input(1)
    if b.ranked(op, theta).rank != 3:
        op.fail("theta must be [N, r, r+1]")
    t = b.result_type(op)
    if not isinstance(t, ir.RankedTensorType):
        from onnx_mlir_py.errors import NeedsInputShapesError
        op.fail("the grid's rank is not known at compile time (size's length)",
                NeedsInputShapesError)
    r = t.rank - 2
    et = theta.type.element_type
    f = _F(b, ir.F64Type.get())
    chk = checks(op, b)
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import wrap
    from onnx_mlir_py.dialects.onnx import dims as D
    vals = [wrap(arith.index_cast(ir.IndexType.get(), tensor.extract(size, [b.index(k)])))
            for k in range(r + 2)]
    n = b.ixdim(theta, 0)
    chk.require(D.eq(vals[0], n), "size[0] is {0} but theta has {1} grids", vals[0], n)
    chk.require(D.both(D.eq(b.ixdim(theta, 1), r), D.eq(b.ixdim(theta, 2), r + 1)),
                f"theta must be [N, {r}, {r + 1}] for a size of length {r + 2}")
    for k in range(2, r + 2):
        chk.require(D.ge(vals[k], 0), f"size[{k}] is {{0}}: expected >= 0", vals[k])
    lens = [index_of(v) for v in vals[2:]]
    out_dims = [index_of(n)] + lens + [r]
    align = op.attrs.align_corners == 1

    def base(i, p):
        """Normalized coordinate of position p along spatial dim i."""
        L, pf = f.of_index(b.as_index(lens[i])), f.of_index(p)
        if align:
            step = arith.divf(f.c(2), arith.subf(L, f.c(1)))
            v = arith.addf(f.c(-1), arith.mulf(pf, step))
            return arith.select(arith.cmpf(F.OLE, L, f.c(1)), f.c(-1), v)
        return arith.addf(f.c(-1), arith.divf(arith.addf(arith.mulf(pf, f.c(2)), f.c(1)), L))

    def body(_o):
        ivs = [loop_index(k) for k in range(r + 2)]
        k = ivs[-1]
        acc = None
        for j in range(r + 1):
            th = tensor.extract(theta, [ivs[0], k, b.index(j)])
            th = convert_scalar(th, False, f.ct)
            term = th if j == r else arith.mulf(th, base(r - 1 - j, ivs[r - j]))
            acc = term if acc is None else arith.addf(acc, term)
        return convert_scalar(acc, False, et)
    init = b.empty(out_dims, et)
    y = b.generic([], [init], [affine_map(r + 2, list(range(r + 2)))], ["parallel"] * (r + 2),
                  body)[0]
    return [b.cast_to(y, t)]
