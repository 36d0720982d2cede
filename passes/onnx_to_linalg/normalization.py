"""Normalizations -> linalg.

BatchNormalization -> one linalg.generic:
y = (x - mean) / sqrt(var + epsilon) * scale + B, channel dim 1 (training_mode=1:
the batch's mean / variance from ``moments``, and the running statistics).
LayerNormalization -> two reductions (mean, variance) + one generic.

InstanceNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
RMSNormalization, LpNormalization -> linalg.generic reductions (sum / count, two-pass
variance) and one elementwise generic each.

GroupNormalization views x (N, C, ...) as (N, G, C/G, ...) with
tensor.expand_shape; LRN sums squares over a channel window read from a
zero-padded x*x through an affine ``c + k`` map.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float, pad
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, require_same_dim
from onnx_mlir_py.dialects.onnx.ops.normalization import group_norm_checks
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to
from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand


_BN_NAMES = ("scale", "B", "input_mean", "input_var")


def require_channel_len(op: OnnxOp, b: LoweringContext, x: ir.Value, params) -> None:
    """1-D per-channel parameters (``(value, name)``) have x's dim 1 elements."""
    for v, name in params:
        if v is not None:
            require_same_dim(op, b, v, 0, x, 1, name, "X")


def require_broadcast_to(op: OnnxOp, b: LoweringContext, x: ir.Value, v: ir.Value,
                         name: str) -> None:
    """``v`` (right-aligned on x) is read at x's indices wherever its dim is
    not a static 1: those dims must be x's."""
    r, vr = x.type.rank, v.type.rank
    for j in range(vr):
        if v.type.is_dynamic_dim(j) or v.type.shape[j] != 1:
            require_same_dim(op, b, v, j, x, r - vr + j, name, "X")


@lowering("BatchNormalization", 9, 14, 15)
def lower_batch_norm(op: OnnxOp, b: LoweringContext):
    """Inference: the input mean / var normalize. training_mode=1 (v14, v15):
    the batch's mean and (population) variance over every dim but 1
    normalize, and running_mean / running_var = input * momentum +
    batch statistic * (1 - momentum), as the spec and onnx.reference."""
    training = "training_mode" in op.spec.attributes and op.attrs.training_mode == 1
    if not training and any(len(list(r.uses)) for r in op.op.results[1:]):
        op.fail("running mean/var outputs are not supported (inference only)")
    x, scale, bias, mean, var = (op.input(i) for i in range(5))
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if r < 2 or not is_float(et):
        op.fail("input must be a float tensor of rank >= 2")
    for v in (scale, bias, mean, var):
        if b.ranked(op, v).rank != 1 or v.type.element_type != et:
            op.fail("scale, B, mean and var must be 1-D of the input's element type")
    require_channel_len(op, b, x, zip((scale, bias, mean, var), _BN_NAMES))
    eps = op.attrs.epsilon
    dims = b.dims(x)
    full = affine_map(r, list(range(r)))
    ch = affine_map(r, [1])
    running = (mean, var)
    if training:
        mean, var = moments(b, x, [0] + list(range(2, r)))

    def body(xv, s, bb, m, v, _o):
        inv = math.rsqrt(arith.addf(v, b.const(eps, et)))
        return arith.addf(arith.mulf(arith.mulf(arith.subf(xv, m), inv), s), bb)
    y = b.generic([x, scale, bias, mean, var], [b.empty(dims, et)],
                  [full, ch, ch, ch, ch, full], ["parallel"] * r, body)[0]
    if not training:
        rest = [b.full(b.dims(v), et, 0.0) for v in (mean, var)][:len(op.op.results) - 1]
        return [y] + rest
    mom = op.attrs.momentum
    keep, new = b.const(mom, et), b.const(1.0 - mom, et)
    rest = [b.map_elementwise([old, cur], b.dims(cur), et,
                              lambda o, c: arith.addf(arith.mulf(o, keep), arith.mulf(c, new)))
            for old, cur in zip(running, (mean, var))]
    return [y] + rest[:len(op.op.results) - 1]


# -- LayerNormalization -----------------------------------------------------------
def _to(x, et):
    from onnx_mlir_py.passes.onnx_to_linalg.builder import convert_scalar
    return convert_scalar(x, False, et)


@lowering("LayerNormalization", 17)
def lower_layer_norm(op: OnnxOp, b: LoweringContext):
    """Normalise over dims [axis, rank): mean, variance (two reductions),
    then one generic for y = (x - mean) * rsqrt(var + eps) * scale + B.
    Statistics are computed in f32 for f16/bf16 inputs (stash_type 1), in
    the input type otherwise; Mean/InvStdDev keep the reduced dims as 1."""
    from onnx_mlir_py.passes.onnx_to_linalg.builder import affine_map as amap
    from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to
    x, scale, bias = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if not is_float(et):
        op.fail("input must be a float tensor")
    axis = op.attrs.axis
    if not -r <= axis < r:
        op.fail(f"axis {axis} is out of range for rank {r}")
    axis = axis + r if axis < 0 else axis
    ct = ir.F32Type.get() if (op.attrs.stash_type == 1 and et.width < 32) else et
    dims = b.dims(x)
    keep = list(range(axis))
    full = amap(r, list(range(r)))
    part = amap(r, keep)
    red_it = ["parallel"] * axis + ["reduction"] * (r - axis)
    kd = dims[:axis]
    n = 1
    for d in dims[axis:]:
        n = n * d if isinstance(d, int) and isinstance(n, int) else \
            arith.muli(b.as_index(n), b.as_index(d))
    if isinstance(n, int):
        nf = b.const(float(n), ct)
    else:
        nf = arith.sitofp(ct, arith.index_cast(ir.IntegerType.get_signless(64), n))
    s = b.generic([x], [b.full(kd, ct, 0.0)], [full, part], red_it,
                  lambda v, a: arith.addf(a, _to(v, ct)))[0]
    mean = b.map_elementwise([s], kd, ct, lambda v: arith.divf(v, nf))

    def sq(v, m, a):
        d = arith.subf(_to(v, ct), m)
        return arith.addf(a, arith.mulf(d, d))
    ss = b.generic([x, mean], [b.full(kd, ct, 0.0)], [full, part, part], red_it, sq)[0]
    eps = b.const(op.attrs.epsilon, ct)
    inv = b.map_elementwise([ss], kd, ct,
                            lambda v: math.rsqrt(arith.addf(arith.divf(v, nf), eps)))

    def bmap(v):  # scale / B broadcast (numpy rules) against x
        vr = b.ranked(op, v).rank
        ex = []
        for j in range(vr):
            k = r - vr + j
            one = not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
            ex.append("0" if one and dims[k] != 1 else k)
        return amap(r, ex)
    for v, name in ((scale, "Scale"), (bias, "B")):
        if v is not None:
            require_broadcast_to(op, b, x, v, name)
    ins = [x, mean, inv, scale] + ([bias] if bias is not None else [])
    maps = [full, part, part, bmap(scale)] + ([bmap(bias)] if bias is not None else [])

    def body(v, m, iv, sc, *rest):
        y = arith.mulf(arith.mulf(arith.subf(_to(v, ct), m), iv), _to(sc, ct))
        if bias is not None:
            y = arith.addf(y, _to(rest[0], ct))
        return _to(y, et)
    y = b.generic(ins, [b.empty(dims, et)], maps + [full], ["parallel"] * r, body)[0]
    outs = [y]
    stat_dims = kd + [1] * (r - axis)
    for i, v in ((1, mean), (2, inv)):
        if i >= len(op.op.results):
            break
        rt = b.result_type(op, i)
        if rt.element_type != ct:
            v = b.map_elementwise([v], kd, rt.element_type,
                                  lambda a, t=rt.element_type: _to(a, t))
        outs.append(reshape_to(op, b, v, stat_dims))
    return outs


def _float_input(op: OnnxOp, b: LoweringContext, min_rank: int = 1):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < min_rank or not is_float(x.type.element_type):
        op.fail(f"input must be a float tensor of rank >= {min_rank}")
    return x, r, x.type.element_type


def _count(b: LoweringContext, dims: list, red: list[int], et: ir.Type) -> ir.Value:
    """Number of reduced elements as a float scalar."""
    static, dyn = 1, None
    for k in red:
        d = dims[k]
        if isinstance(d, int):
            static *= d
        else:
            dyn = d if dyn is None else arith.muli(dyn, d)
    if dyn is None:
        return b.const(float(static), et)
    if static != 1:
        dyn = arith.muli(dyn, b.index(static))
    return arith.uitofp(et, arith.index_cast(ir.IntegerType.get_signless(64), dyn))


def moments(b: LoweringContext, x: ir.Value, red: list[int], squares_only: bool = False):
    """(mean, var) over dims ``red`` as tensors of the kept dims; with
    squares_only: (None, mean(x*x))."""
    r = x.type.rank
    et = x.type.element_type
    dims = b.dims(x)
    keep = [k for k in range(r) if k not in red]
    kdims = [dims[k] for k in keep]
    full, part = affine_map(r, list(range(r))), affine_map(r, keep)
    it = ["reduction" if k in red else "parallel" for k in range(r)]
    n = _count(b, dims, red, et)
    kid = affine_map(len(keep), list(range(len(keep))))
    kpar = ["parallel"] * len(keep)

    def mean_of(t):
        return b.generic([t], [b.empty(kdims, et)], [kid, kid], kpar,
                         lambda s, _o: arith.divf(s, n))[0]
    if squares_only:
        sq = b.generic([x], [b.full(kdims, et, 0.0)], [full, part], it,
                       lambda v, a: arith.addf(a, arith.mulf(v, v)))[0]
        return None, mean_of(sq)
    s = b.generic([x], [b.full(kdims, et, 0.0)], [full, part], it,
                  lambda v, a: arith.addf(a, v))[0]
    mean = mean_of(s)

    def sqdev(v, m, a):
        d = arith.subf(v, m)
        return arith.addf(a, arith.mulf(d, d))
    ss = b.generic([x, mean], [b.full(kdims, et, 0.0)], [full, part, part], it, sqdev)[0]
    return mean, mean_of(ss)


@lowering("InstanceNormalization", 6, 22)
def lower_instance_norm(op: OnnxOp, b: LoweringContext):
    x, r, et = _float_input(op, b, 3)
    scale, bias = op.input(1), op.input(2)
    for v in (scale, bias):
        if b.ranked(op, v).rank != 1:
            op.fail("scale and B must be 1-D")
    require_channel_len(op, b, x, ((scale, "scale"), (bias, "B")))
    red = list(range(2, r))
    mean, var = moments(b, x, red)
    eps = b.const(op.attrs.epsilon, et)
    full, nc, ch = affine_map(r, list(range(r))), affine_map(r, [0, 1]), affine_map(r, [1])

    def body(v, m, va, s, bb, _o):
        y = arith.mulf(arith.subf(v, m), math.rsqrt(arith.addf(va, eps)))
        return arith.addf(arith.mulf(y, s), bb)
    return b.generic([x, mean, var, scale, bias], [b.empty(b.dims(x), et)],
                     [full, nc, nc, ch, ch, full], ["parallel"] * r, body)


@lowering("GroupNormalization", 18, 21)
def lower_group_norm(op: OnnxOp, b: LoweringContext):
    """x (N, C, ...) viewed as (N, G, C/G, ...); v21's per-channel scale and
    bias (C) as (G, C/G). C may be dynamic (one dynamic size per expanded
    group); the checks are the rule's ``group_norm_checks`` on run-time dims."""
    x, r, et = _float_input(op, b, 3)
    scale, bias = op.input(1), op.input(2)
    g = op.attrs.num_groups
    if g <= 0:
        op.fail(f"num_groups must be positive, got {g}")
    per_channel = op.version >= 21
    for v in (scale, bias):
        if b.ranked(op, v).rank != 1:
            op.fail("scale and bias must be 1-D")
    cg = group_norm_checks(checks(op, b), b.ixdim(x, 1), g, b.ixdim(scale, 0),
                           b.ixdim(bias, 0), per_channel)
    cg = index_of(cg)
    dims = b.dims(x)
    # stash_type=1 (v21): statistics in f32
    ct = et
    if per_channel and op.attrs.stash_type == 1 and not isinstance(et, ir.F64Type):
        ct = ir.F32Type.get()
    xg = expand(b, x, [[0], [1, 2]] + [[k] for k in range(3, r + 1)][: r - 2],
                [dims[0], g, cg] + dims[2:])
    r5 = r + 1
    if ct != et:
        xg = b.map_elementwise([xg], b.dims(xg), ct, lambda v: arith.extf(ct, v))
    mean, var = moments(b, xg, list(range(2, r5)))
    eps = b.const(op.attrs.epsilon, ct)
    full, ng = affine_map(r5, list(range(r5))), affine_map(r5, [0, 1])
    if per_channel:  # channel = group * (C/G) + c_in_group
        scale, bias = (expand(b, v, [[0, 1]], [g, cg]) for v in (scale, bias))
        ch = affine_map(r5, [1, 2])
    else:
        ch = affine_map(r5, [1])

    def body(v, m, va, s, bb, _o):
        y = arith.mulf(arith.subf(v, m), math.rsqrt(arith.addf(va, eps)))
        if ct != et:
            y = arith.truncf(et, y)
        return arith.addf(arith.mulf(y, s), bb)
    yg = b.generic([xg, mean, var, scale, bias], [b.empty(b.dims(xg), et)],
                   [full, ng, ng, ch, ch, full], ["parallel"] * r5, body)[0]
    return [collapse_to(b, yg, [[0], [1, 2]] + [[k] for k in range(3, r5)], b.dims(x))]


@lowering("LRN", 1, 13)
def lower_lrn(op: OnnxOp, b: LoweringContext):
    x, r, et = _float_input(op, b, 3)
    size = op.attrs.size
    if size <= 0:
        op.fail(f"size must be positive, got {size}")
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    sq = b.map_elementwise([x], b.dims(x), et, lambda v: arith.mulf(v, v))
    sqp = pad(b, sq, [0, lo] + [0] * (r - 2), [0, hi] + [0] * (r - 2), 0.0)
    dims = b.dims(x)
    # iteration (d0..d{r-1}, k): padded[n, c + k, ...]
    n_it = r + 1
    es = [ir.AffineDimExpr.get(i) for i in range(r)]
    es[1] = ir.AffineExpr.get_add(es[1], ir.AffineDimExpr.get(r))
    in_map = ir.AffineMap.get(n_it, 0, es)
    win = b.empty([size], et)
    ssum = b.generic([sqp, win], [b.full(dims, et, 0.0)],
                     [in_map, affine_map(n_it, [r]), affine_map(n_it, list(range(r)))],
                     ["parallel"] * r + ["reduction"],
                     lambda v, _w, a: arith.addf(a, v))[0]
    alpha, beta, bias = op.attrs.alpha, op.attrs.beta, op.attrs.bias

    def body(v, s):
        base = arith.addf(b.const(bias, et), arith.mulf(b.const(alpha / size, et), s))
        return arith.divf(v, math.powf(base, b.const(beta, et)))
    return [b.map_elementwise([x, ssum], dims, et, body)]


@lowering("MeanVarianceNormalization", 9, 13)
def lower_mvn(op: OnnxOp, b: LoweringContext):
    x, r, et = _float_input(op, b)
    axes = sorted({a + r if a < 0 else a for a in op.attrs.axes})
    if any(not 0 <= a < r for a in axes):
        op.fail(f"axes {op.attrs.axes} out of range for rank {r}")
    mean, _ = moments(b, x, axes)
    _, msq = moments(b, x, axes, squares_only=True)
    keep = [k for k in range(r) if k not in axes]
    full, part = affine_map(r, list(range(r))), affine_map(r, keep)

    def body(v, m, q, _o):  # (x - E x) / (sqrt(E x^2 - (E x)^2) + 1e-9), as the function body
        std = math.sqrt(arith.subf(q, arith.mulf(m, m)))
        return arith.divf(arith.subf(v, m), arith.addf(std, b.const(1e-9, et)))
    return b.generic([x, mean, msq], [b.empty(b.dims(x), et)], [full, part, part, full],
                     ["parallel"] * r, body)


@lowering("RMSNormalization", 23)
def lower_rms_norm(op: OnnxOp, b: LoweringContext):
    x, r, et = _float_input(op, b)
    scale = op.input(1)
    axis = op.attrs.axis
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r:
        op.fail(f"axis {op.attrs.axis} out of range for rank {r}")
    sr = b.ranked(op, scale).rank
    if sr > r:
        op.fail(f"scale rank {sr} exceeds the input rank {r}")
    ct = et
    if op.attrs.stash_type == 1 and not isinstance(et, ir.F64Type):
        ct = ir.F32Type.get()
    xc = x if ct == et else b.map_elementwise([x], b.dims(x), ct, lambda v: arith.extf(ct, v))
    red = list(range(axis, r))
    _, msq = moments(b, xc, red, squares_only=True)
    keep = [k for k in range(axis)]
    full, part = affine_map(r, list(range(r))), affine_map(r, keep)
    require_broadcast_to(op, b, x, scale, "scale")
    sshape = op.shape(scale)
    smap = affine_map(r, ["0" if sshape[j] == 1 and op.shape(x)[r - sr + j] != 1
                          else r - sr + j for j in range(sr)])
    eps = b.const(op.attrs.epsilon, ct)

    def body(v, q, s, _o):
        y = arith.mulf(v, math.rsqrt(arith.addf(q, eps)))
        if ct != et:
            y = arith.truncf(et, y)
        return arith.mulf(y, s)
    return b.generic([xc, msq, scale], [b.empty(b.dims(x), et)], [full, part, smap, full],
                     ["parallel"] * r, body)


@lowering("LpNormalization", 1, 22)
def lower_lp_norm(op: OnnxOp, b: LoweringContext):
    """y = x / ||x||_p along ``axis``: one reduction (sum |x| for p = 1, sum x^2
    for p = 2) and one generic dividing by it (its sqrt); a zero norm gives 0,
    as onnxruntime (onnx.reference gives NaN)."""
    x, r, et = _float_input(op, b)
    axis = op.attrs.axis + r if op.attrs.axis < 0 else op.attrs.axis
    p = op.attrs.p
    dims = b.dims(x)
    keep = [k for k in range(r) if k != axis]
    full, part = affine_map(r, list(range(r))), affine_map(r, keep)
    it = ["reduction" if k == axis else "parallel" for k in range(r)]
    acc = b.generic([x], [b.full([dims[k] for k in keep], et, 0.0)], [full, part], it,
                    lambda v, a: arith.addf(a, math.absf(v) if p == 1 else arith.mulf(v, v)))[0]
    zero = b.const(0.0, et)

    def body(v, s, _o):
        n = s if p == 1 else math.sqrt(s)
        return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, n, zero), zero, arith.divf(v, n))
    return b.generic([x, acc], [b.empty(dims, et)], [full, part, full], ["parallel"] * r, body)
