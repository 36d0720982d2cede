"""MaxPool / AveragePool: 2-D (NCHW) -> linalg.pooling_nchw_max / _sum, other
ranks and LpPool -> a window-reduction linalg.generic (``pool_nd``);
GlobalAveragePool / GlobalMaxPool / GlobalLpPool -> linalg.generic reductions.

Padding is explicit (tensor.pad with -inf / 0); ceil_mode adds end padding.
AveragePool divisors (count_include_pad, ceil_mode) are a constant computed
at compile time from the static spatial shape (outer product of per-dim counts).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, linalg, math

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float, lowest, pad
from .conv import spatial_params


def _has(op: OnnxOp, name: str) -> bool:
    return name in op.spec.attributes


def _pool_setup(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < 3:
        op.fail("input must have rank >= 3 (N, C, spatial...)")
    ns = r - 2
    if len(op.op.results) > 1 and len(list(op.op.results[1].uses)):
        op.fail("the Indices output is not supported")
    xs = op.shape(x)
    if any(d is None for d in xs[2:]):
        op.fail("spatial dims must be static")
    kernel = list(op.attrs.kernel_shape)
    if len(kernel) != ns:
        op.fail(f"kernel_shape must have {ns} entries")
    pb, pe, strides, dil = spatial_params(op, xs[2:], kernel, ns, _has(op, "dilations"))
    ceil = _has(op, "ceil_mode") and op.attrs.ceil_mode
    out_t = b.result_type(op)
    osz = []
    extra = []
    for i in range(ns):
        full = xs[2 + i] + pb[i] + pe[i] - ((kernel[i] - 1) * dil[i] + 1)
        o = (-(-full // strides[i]) if ceil else full // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= xs[2 + i] + pb[i]:
            o -= 1  # the last window must start inside the input or left padding
        if not out_t.is_dynamic_dim(2 + i) and out_t.shape[2 + i] != o:
            op.fail(f"computed output size {o} differs from the result type {out_t}")
        need = (o - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - (xs[2 + i] + pb[i] + pe[i])
        extra.append(max(0, need))
        osz.append(o)
    out_dims = [b.dim(x, 0), b.dim(x, 1)] + osz
    return x, xs, kernel, pb, pe, strides, dil, extra, out_dims


def pool_nd(b: LoweringContext, xp, init, kernel, strides, dil, body):
    """Window reduction as linalg.generic, iteration (n, c, o..., k...):
    out[n, c, o] = body(xp[n, c, o*s + k*d], out) over the window."""
    ns = len(kernel)
    nd = 2 + 2 * ns
    D = ir.AffineDimExpr.get
    sp = [ir.AffineExpr.get_add(
        ir.AffineExpr.get_mul(D(2 + i), ir.AffineConstantExpr.get(strides[i])),
        ir.AffineExpr.get_mul(D(2 + ns + i), ir.AffineConstantExpr.get(dil[i])))
        for i in range(ns)]
    in_map = ir.AffineMap.get(nd, 0, [D(0), D(1)] + sp)
    win = b.empty(list(kernel), xp.type.element_type)
    return b.generic([xp, win], [init], [in_map, affine_map(nd, list(range(2 + ns, nd))),
                                         affine_map(nd, list(range(2 + ns)))],
                     ["parallel"] * (2 + ns) + ["reduction"] * ns,
                     lambda v, _w, acc: body(v, acc))[0]


def _window(b: LoweringContext, kernel, et):
    return b.empty(list(kernel), et)


def _pad_input(b, x, pb, pe, extra, value):
    return pad(b, x, [0, 0] + pb, [0, 0] + [p + e for p, e in zip(pe, extra)], value)


@lowering("MaxPool", 1, 8, 10, 11, 12, 22)
def lower_max_pool(op: OnnxOp, b: LoweringContext):
    x, xs, kernel, pb, pe, strides, dil, extra, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    uns = b.unsigned(x)
    low = 0 if uns else lowest(et)
    xp = _pad_input(b, x, pb, pe, extra, low)
    init = b.full(out_dims, et, low)
    if len(kernel) == 2 and not uns:
        y = linalg.pooling_nchw_max(xp, _window(b, kernel, et), outs=[init],
                                    strides=strides, dilations=dil)
    else:
        mx = arith.maximumf if is_float(et) else (arith.maxui if uns else arith.maxsi)
        y = pool_nd(b, xp, init, kernel, strides, dil, lambda v, acc: mx(acc, v))
    res = [y]
    if len(op.op.results) > 1:  # unused Indices: give it a value of the right type
        t = b.result_type(op, 1)
        res.append(b.full(out_dims, t.element_type, 0))
    return res


def _window_counts(op, xs, kernel, pb, pe, strides, dil, extra, osz) -> np.ndarray:
    """Divisor per output position: the box window's count of counted cells
    factorizes into per-dim counts (outer product)."""
    include = _has(op, "count_include_pad") and op.attrs.count_include_pad
    cnt = np.ones([], np.float64)
    for i in range(len(kernel)):
        n = xs[2 + i]
        ones = np.zeros(n + pb[i] + pe[i] + extra[i], np.float64)
        if include:
            ones[:n + pb[i] + pe[i]] = 1
        else:
            ones[pb[i]:pb[i] + n] = 1
        span = (kernel[i] - 1) * dil[i] + 1
        c1 = np.array([ones[o * strides[i]: o * strides[i] + span: dil[i]].sum()
                       for o in range(osz[i])])
        cnt = np.multiply.outer(cnt, c1)
    return cnt


@lowering("AveragePool", 1, 7, 10, 11, 19, 22)
def lower_average_pool(op: OnnxOp, b: LoweringContext):
    x, xs, kernel, pb, pe, strides, dil, extra, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float AveragePool is supported")
    xp = _pad_input(b, x, pb, pe, extra, 0.0)
    init = b.full(out_dims, et, 0.0)
    if len(kernel) == 2:
        s = linalg.pooling_nchw_sum(xp, _window(b, kernel, et), outs=[init],
                                    strides=strides, dilations=dil)
    else:
        s = pool_nd(b, xp, init, kernel, strides, dil, lambda v, acc: arith.addf(acc, v))
    cnt = _window_counts(op, xs, kernel, pb, pe, strides, dil, extra, out_dims[2:])
    np_dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(str(et))
    if np_dt is None:
        op.fail(f"AveragePool on {et} is not supported")
    r = len(out_dims)
    if np.all(cnt == cnt.flat[0]):
        d = b.const(float(cnt.flat[0]), et)
        return [b.map_elementwise([s], out_dims, et, lambda v: arith.divf(v, d))]
    ctype = ir.RankedTensorType.get(list(cnt.shape), et)
    c = arith.constant(ctype, ir.DenseElementsAttr.get(np.ascontiguousarray(cnt.astype(np_dt)),
                                                       type=ctype))
    full = affine_map(r, list(range(r)))
    return b.generic([s, c], [b.empty(out_dims, et)], [full, affine_map(r, list(range(2, r))),
                                                        full],
                     ["parallel"] * r, lambda v, n, _o: arith.divf(v, n))


def _pow_p(v, p: int):
    """|v|^p (p a small positive int: repeated multiply; else powf)."""
    a = math.absf(v)
    if p == 1:
        return a
    if p == 2:
        return arith.mulf(a, a)
    return math.powf(a, LoweringContext.const(float(p), v.type))


def _root_p(v, p: int):
    if p == 1:
        return v
    if p == 2:
        return math.sqrt(v)
    return math.powf(v, LoweringContext.const(1.0 / p, v.type))


@lowering("LpPool", 2, 11, 18, 22)
def lower_lp_pool(op: OnnxOp, b: LoweringContext):
    x, xs, kernel, pb, pe, strides, dil, extra, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float LpPool is supported")
    p = int(op.attrs.p)
    if p <= 0:
        op.fail(f"p must be positive, got {p}")
    xp = _pad_input(b, x, pb, pe, extra, 0.0)
    s = pool_nd(b, xp, b.full(out_dims, et, 0.0), kernel, strides, dil,
                lambda v, acc: arith.addf(acc, _pow_p(v, p)))
    return [b.map_elementwise([s], out_dims, et, lambda v: _root_p(v, p))]


@lowering("GlobalLpPool", 2, 22)
def lower_global_lp_pool(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if r < 3 or not is_float(et):
        op.fail("input must be a float tensor of rank >= 3")
    p = int(op.attrs.p)
    if p <= 0:
        op.fail(f"p must be positive, got {p}")
    dims = b.dims(x)
    out_dims = dims[:2] + [1] * (r - 2)
    red = b.generic([x], [b.full(out_dims, et, 0.0)],
                    [affine_map(r, list(range(r))), affine_map(r, [0, 1] + ["0"] * (r - 2))],
                    ["parallel"] * 2 + ["reduction"] * (r - 2),
                    lambda v, acc: arith.addf(acc, _pow_p(v, p)))[0]
    return [b.map_elementwise([red], out_dims, et, lambda v: _root_p(v, p))]


def _global(op: OnnxOp, b: LoweringContext, kind: str):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < 3:
        op.fail("input must have rank >= 3")
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float global pooling is supported")
    dims = b.dims(x)
    out_dims = dims[:2] + [1] * (r - 2)
    init = b.full(out_dims, et, 0.0 if kind == "avg" else float("-inf"))
    in_map = affine_map(r, list(range(r)))
    out_map = affine_map(r, [0, 1] + ["0"] * (r - 2))
    red = b.generic([x], [init], [in_map, out_map], ["parallel"] * 2 + ["reduction"] * (r - 2),
                    lambda v, acc: arith.addf(acc, v) if kind == "avg"
                    else arith.maximumf(acc, v))[0]
    if kind == "max":
        return [red]
    n = None
    static = 1
    for d in dims[2:]:
        if isinstance(d, int):
            static *= d
        else:
            n = d if n is None else arith.muli(n, d)
    if n is None:
        cnt = b.const(float(static), et)
    else:
        if static != 1:
            n = arith.muli(n, b.index(static))
        cnt = arith.uitofp(et, arith.index_cast(ir.IntegerType.get_signless(64), n))
    return [b.map_elementwise([red], out_dims, et, lambda v: arith.divf(v, cnt))]


@lowering("GlobalAveragePool", 1, 22)
def lower_global_average_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "avg")


@lowering("GlobalMaxPool", 1, 22)
def lower_global_max_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "max")
