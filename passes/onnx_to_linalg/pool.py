"""MaxPool / AveragePool: 2-D (NCHW) -> linalg.pooling_nchw_max / _sum (1-D
as the 2-D pool of the [N, C, 1, L] view), 3-D, ..., unsigned MaxPool and
LpPool -> a window-reduction linalg.generic (``pool_nd``);
GlobalAveragePool / GlobalMaxPool / GlobalLpPool -> linalg.generic reductions.
MaxUnpool -> zeros, then an ``scf.for`` nest over X inserting each element at
its (range-checked) flat index, as the Scatter lowerings (gather.py).

The window arithmetic (output sizes, auto_pad SAME pads, ceil_mode) is the
pool shape rule's helper (``dialects/onnx/ops/conv.py::window_axes``) on
run-time dims, so every dim may be dynamic. Padding is explicit (tensor.pad
with -inf / 0, run-time amounts for SAME); ceil_mode adds end padding.
AveragePool's divisor is a constant when no window reaches into padding,
else computed per output position from index arithmetic (``_divisor``).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, is_float,
                                                        lowest, pad)
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.conv import Window, window, window_axes
from onnx_mlir_py.dialects.onnx.ops.pool import unpool_inferred, unpool_window
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import (checks, fit_result, index_of,
                                                        int_elements, require_same_dim, wrap)
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, to_index
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to, view_2d
from onnx_mlir_py.passes.onnx_to_linalg.reshape import dims_product, expand, reshape_with_shape


def _has(op: OnnxOp, name: str) -> bool:
    return name in op.spec.attributes


def _pool_setup(op: OnnxOp, b: LoweringContext):
    """(x, window, axes, out_dims): the pool rule's window helper on run-time dims."""
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < 3:
        op.fail("input must have rank >= 3 (N, C, spatial...)")
    ns = r - 2
    win = window(op, ns, require_kernel=True)
    ctx = checks(op, b)
    xd = b.ixdims(x)
    axes = window_axes(win, ctx, xd[2:], drop_padded_window=True)
    clamped = _clamped_window(win, axes, xd[2:])
    if clamped is not None:
        win, axes = clamped, window_axes(clamped, ctx, xd[2:], drop_padded_window=True)
    out_dims = [index_of(d) for d in fit_result(op, b, xd[:2] + [a.out for a in axes])]
    return x, win, axes, out_dims


def _clamped_window(win, axes, sizes):
    """With ceil_mode a window may be larger than the padded input (one
    output, ``window_axes``): its taps past the padded input read ceil
    mode's extra end padding, which no pool counts (-inf / not in the
    divisor), so the kernel is cut to the padded input (one window still) and
    the pads made explicit; None when no axis needs it. (Padding to the whole
    window instead costs its size per channel: 640 x 640 for the EfficientNet
    pooler.) Axes with a dilation, a dynamic size or run-time pads keep their
    kernel and get the end padding (computed at run time)."""
    pads = [a.pad_begin for a in axes] + [a.pad_end for a in axes]
    if not win.ceil_mode or not all(D.is_static(p) for p in pads):
        return None
    kernel = list(win.kernel)
    for i, (a, size) in enumerate(zip(axes, sizes)):
        padded = size + a.pad_begin + a.pad_end
        if D.is_static(padded) and padded < a.kernel and win.dilations[i] == 1:
            kernel[i] = padded
    if kernel == list(win.kernel):
        return None
    return Window(kernel, list(win.strides), list(win.dilations), pads, "NOTSET", 1)


def window_maps(win) -> tuple[int, ir.AffineMap, ir.AffineMap, ir.AffineMap]:
    """(loop count, the padded input's map, the window's map, the output's
    map) of a window reduction over (n, c, o..., k...) reading
    xp[n, c, o*s + k*d]."""
    strides, dil = win.strides, win.dilations
    ns = len(win.kernel)
    nd = 2 + 2 * ns
    D = ir.AffineDimExpr.get
    sp = [ir.AffineExpr.get_add(
        ir.AffineExpr.get_mul(D(2 + i), ir.AffineConstantExpr.get(strides[i])),
        ir.AffineExpr.get_mul(D(2 + ns + i), ir.AffineConstantExpr.get(dil[i])))
        for i in range(ns)]
    return (nd, ir.AffineMap.get(nd, 0, [D(0), D(1)] + sp),
            affine_map(nd, list(range(2 + ns, nd))), affine_map(nd, list(range(2 + ns))))


def pool_nd(b: LoweringContext, xp, init, win, body):
    """Window reduction as linalg.generic, iteration (n, c, o..., k...):
    out[n, c, o] = body(xp[n, c, o*s + k*d], out) over the window."""
    ns = len(win.kernel)
    _nd, in_map, win_map, out_map = window_maps(win)
    w = b.empty(list(win.kernel), xp.type.element_type)
    return b.generic([xp, w], [init], [in_map, win_map, out_map],
                     ["parallel"] * (2 + ns) + ["reduction"] * ns,
                     lambda v, _w, acc: body(v, acc))[0]


def _named_pool(b: LoweringContext, named, x, axes, win, out_dims, et, init, post=None):
    """``named`` (linalg.pooling_nchw_max / _sum) of ``x`` padded with
    ``init``, then ``post(y, dims)`` if given; a 1-D pool is the 2-D one of
    the [N, C, 1, L] view (so -O3 runs it on the pool kernel with its pad and
    ``post`` fused, passes/optimize/pool.py), its result viewed back."""
    kernel, strides, dil = list(win.kernel), list(win.strides), list(win.dilations)
    lo = [index_of(a.pad_begin) for a in axes]
    hi = [index_of(a.pad_end + a.extra) for a in axes]
    dims = list(out_dims)
    if len(kernel) == 1:
        x = view_2d(b, x)
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        lo, hi = [0] + lo, [0] + hi
        dims = dims[:2] + [1, dims[2]]
    xp = pad(b, x, [0, 0] + lo, [0, 0] + hi, init)
    y = named(xp, b.empty(kernel, et), outs=[b.full(dims, et, init)], strides=strides,
              dilations=dil)
    if post is not None:
        y = post(y, dims)
    if len(out_dims) == 3:
        y = collapse_to(b, y, [[0], [1], [2, 3]], out_dims)
    return y


def _pad_input(b, x, axes, value):
    return pad(b, x, [0, 0] + [index_of(a.pad_begin) for a in axes],
               [0, 0] + [index_of(a.pad_end + a.extra) for a in axes], value)


def _max_pool_with_indices(op: OnnxOp, b: LoweringContext, x, win, axes, out_dims, low):
    """(Y, Indices): one window reduction carrying the max and its flat
    index into X (``((n*C + c)*H + h)*W + w``; with storage_order 1 the
    spatial dims column-major, ``(n*C + c)*H*W + w*H + h``). The first
    element of the window (in row-major window order) that is larger than
    all before it wins, as in onnxruntime; taps in the padding never count,
    so a window of -inf values gives its first in-image element; a NaN
    beats numbers (the first NaN of a window is its max, as Y without
    Indices propagates NaN)."""
    et = x.type.element_type
    uns = b.unsigned(x)
    i64 = ir.IntegerType.get_signless(64)
    ns = len(win.kernel)
    xd = b.ixdims(x)
    col_major = _has(op, "storage_order") and op.attrs.storage_order == 1
    pads = [index_of(a.pad_begin) for a in axes]
    gt = (lambda v, m: arith.cmpf(arith.CmpFPredicate.OGT, v, m)) if is_float(et) else \
        (lambda v, m: arith.cmpi(arith.CmpIPredicate.ugt if uns else arith.CmpIPredicate.sgt, v, m))

    def body(v, acc, acc_i):
        coords = [wrap(loop_index(2 + i)) * win.strides[i]
                  + wrap(loop_index(2 + ns + i)) * win.dilations[i] - wrap(pads[i])
                  for i in range(ns)]
        def iv(d):              # a helper's dim as an index Value
            return b.as_index(index_of(d))
        valid = None
        for c, size in zip(coords, xd[2:]):
            ci = iv(c)
            inside = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, ci, iv(0)),
                                arith.cmpi(arith.CmpIPredicate.slt, ci, iv(size)))
            valid = inside if valid is None else arith.andi(valid, inside)
        order = list(range(ns))[::-1] if col_major else list(range(ns))
        flat = wrap(loop_index(0)) * xd[1] + wrap(loop_index(1))
        for i in order:
            flat = flat * xd[2 + i] + coords[i]
        first = arith.cmpi(arith.CmpIPredicate.slt, acc_i, b.const(0, i64))
        better = gt(v, acc)
        if is_float(et):    # a NaN wins over numbers (Y as without Indices: NaN propagates)
            better = arith.ori(better, arith.andi(
                arith.cmpf(arith.CmpFPredicate.UNO, v, v),
                arith.cmpf(arith.CmpFPredicate.ORD, acc, acc)))
        take = arith.andi(valid, arith.ori(first, better))
        return [arith.select(take, v, acc),
                arith.select(take, arith.index_cast(i64, iv(flat)), acc_i)]
    _nd, in_map, win_map, out_map = window_maps(win)
    xp = _pad_input(b, x, axes, low)
    outs = [b.full(out_dims, et, low), b.full(out_dims, i64, -1)]
    y, idx = b.generic([xp, b.empty(list(win.kernel), et)], outs,
                       [in_map, win_map, out_map, out_map],
                       ["parallel"] * (2 + ns) + ["reduction"] * ns,
                       lambda v, _w, acc, acc_i: body(v, acc, acc_i))
    return [y, idx]


@lowering("MaxPool", 1, 8, 10, 11, 12, 22)
def lower_max_pool(op: OnnxOp, b: LoweringContext):
    x, win, axes, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    uns = b.unsigned(x)
    low = 0 if uns else lowest(et)
    if len(op.op.results) > 1 and len(list(op.op.results[1].uses)):
        return _max_pool_with_indices(op, b, x, win, axes, out_dims, low)
    if _separable(win, axes) and not uns:
        y = _separable_max_pool(b, x, win, axes, out_dims, et, low)
    elif len(axes) <= 2 and not uns:
        y = _named_pool(b, linalg.pooling_nchw_max, x, axes, win, out_dims, et, low)
    else:
        mx = arith.maximumf if is_float(et) else (arith.maxui if uns else arith.maxsi)
        y = pool_nd(b, _pad_input(b, x, axes, low), b.full(out_dims, et, low), win,
                    lambda v, acc: mx(acc, v))
    res = [y]
    if len(op.op.results) > 1:  # unused Indices: give it a value of the right type
        t = b.result_type(op, 1)
        res.append(b.full(out_dims, t.element_type, 0))
    return res


def _separable(win, axes) -> bool:
    """A 2-D max pool of stride 1 and dilation 1 whose window has more taps
    than its rows plus its columns, with static pads (no ceil-mode extra)."""
    if len(axes) != 2 or list(win.strides) != [1, 1] or list(win.dilations) != [1, 1]:
        return False
    kh, kw = win.kernel
    if min(kh, kw) < 2 or kh * kw <= kh + kw:
        return False
    return all(D.is_static(v) and int(v) == 0 for v in (axes[0].extra, axes[1].extra)) \
        and all(D.is_static(v) for a in axes for v in (a.pad_begin, a.pad_end))


def _separable_max_pool(b: LoweringContext, x, win, axes, out_dims, et, low):
    """The KH x KW max pool as a 1 x KW pool of the rows (the columns'
    pads) then a KH x 1 pool of its result (the rows' pads): the max of
    the same values, KH + KW taps per output instead of KH * KW (the same
    result, NaN included: maximumf is NaN when any operand is; YOLO's SPPF
    5x5 pools at 20x20x128: 0.33 -> 0.14 ms for the three, one thread)."""
    kh, kw = win.kernel
    (top, bottom), (left, right) = [(int(a.pad_begin), int(a.pad_end)) for a in axes]
    rows = [index_of(d) for d in b.ixdims(x)[:3]] + [out_dims[3]]
    xp = pad(b, x, [0, 0, 0, left], [0, 0, 0, right], low)
    y1 = linalg.pooling_nchw_max(xp, b.empty([1, kw], et), outs=[b.full(rows, et, low)],
                                 strides=[1, 1], dilations=[1, 1])
    yp = pad(b, y1, [0, 0, top, 0], [0, 0, bottom, 0], low)
    return linalg.pooling_nchw_max(yp, b.empty([kh, 1], et), outs=[b.full(out_dims, et, low)],
                                   strides=[1, 1], dilations=[1, 1])


def _divisor(op: OnnxOp, b: LoweringContext, x, win, axes, et):
    """AveragePool's divisor: the number of counted cells of each window, a
    product over axes of ``#{j < k : lo <= o*s - pad_begin + j*d < hi}`` with
    [lo, hi) the input (count_include_pad=0) or the input and its pads (ceil
    mode's extra end padding is never counted). A constant when no window
    reaches into padding; else computed per output position (index arithmetic
    on linalg.index, so dynamic sizes and SAME padding need no table)."""
    include = _has(op, "count_include_pad") and op.attrs.count_include_pad
    no_pad = [D.is_static(a.extra) and a.extra == 0 and (include or (
        D.is_static(a.pad_begin) and D.is_static(a.pad_end) and a.pad_begin == 0 ==
        a.pad_end)) for a in axes]
    if all(no_pad):
        return b.const(float(D.product(win.kernel)), et)
    sizes = b.ixdims(x)[2:]

    def count():
        n = 1
        for i, a in enumerate(axes):
            if no_pad[i]:
                n = n * win.kernel[i]
                continue
            size = sizes[i]
            k, s, d = win.kernel[i], win.strides[i], win.dilations[i]
            start = wrap(loop_index(2 + i)) * s - a.pad_begin
            lo, hi = (0 - a.pad_begin, size + a.pad_end) if include else (0, size)
            first = D.dmax(lo - start if d == 1 else D.ceil_div(lo - start, d), 0)
            last = D.dmin(hi - 1 - start if d == 1 else (hi - 1 - start) // d, k - 1)
            n = n * D.dmax(last - first + 1, 0)
        # a window with no counted cell (dilations can step over every input
        # cell) averages to 0 / 1 = 0, as onnxruntime (fuzz s2002-91), not 0 / 0
        n = D.dmax(n, 1)
        return arith.sitofp(et, arith.index_cast(ir.IntegerType.get_signless(64), index_of(n)))
    return count


@lowering("AveragePool", 1, 7, 10, 11, 19, 22)
def lower_average_pool(op: OnnxOp, b: LoweringContext):
    x, win, axes, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float AveragePool is supported")
    d = _divisor(op, b, x, win, axes, et)
    if isinstance(d, ir.Value) and len(axes) <= 2:     # divided in the pool's (4-D) view
        return [_named_pool(b, linalg.pooling_nchw_sum, x, axes, win, out_dims, et, 0.0,
                            lambda y, dims: b.map_elementwise([y], dims, et,
                                                              lambda v: arith.divf(v, d)))]
    if len(axes) <= 2:
        s = _named_pool(b, linalg.pooling_nchw_sum, x, axes, win, out_dims, et, 0.0)
    else:
        s = pool_nd(b, _pad_input(b, x, axes, 0.0), b.full(out_dims, et, 0.0), win,
                    lambda v, acc: arith.addf(acc, v))
    if isinstance(d, ir.Value):
        return [b.map_elementwise([s], out_dims, et, lambda v: arith.divf(v, d))]
    return [b.map_elementwise([s], out_dims, et, lambda v: arith.divf(v, d()))]


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
    x, win, axes, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float LpPool is supported")
    p = int(op.attrs.p)
    if p <= 0:
        op.fail(f"p must be positive, got {p}")
    xp = _pad_input(b, x, axes, 0.0)
    ct = _lp_compute_type(et)
    s = pool_nd(b, xp, b.full(out_dims, ct, 0.0), win,
                lambda v, acc: arith.addf(acc, _pow_p(_widen(v, ct), p)))
    return [b.map_elementwise([s], out_dims, et, lambda v: _narrow(_root_p(v, p), et))]


def _lp_compute_type(et: ir.Type) -> ir.Type:
    """LpPool's sum of |x|^p in f32 for 16-bit floats: |x|^p overflows f16
    from |x| = 41 at p = 3 (fuzz s2811-7: inf where onnx.reference gives 45.1)."""
    return ir.F32Type.get() if isinstance(et, (ir.F16Type, ir.BF16Type)) else et


def _widen(v, ct):
    return arith.extf(ct, v) if v.type != ct else v


def _narrow(v, et):
    return arith.truncf(et, v) if v.type != et else v


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
    ct = _lp_compute_type(et)
    red = b.generic([x], [b.full(out_dims, ct, 0.0)],
                    [affine_map(r, list(range(r))), affine_map(r, [0, 1] + ["0"] * (r - 2))],
                    ["parallel"] * 2 + ["reduction"] * (r - 2),
                    lambda v, acc: arith.addf(acc, _pow_p(_widen(v, ct), p)))[0]
    return [b.map_elementwise([red], out_dims, et, lambda v: _narrow(_root_p(v, p), et))]


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
    # the spatial dims made one: [N, C, H*W...] reduced over its last dim
    # into [N, C], a row reduction the -O3 elementwise step vectorizes (over
    # two or more trailing reduction dims the sum stayed one scalar add
    # chain: MobileNetV3's squeeze-excite pools). A tensor.reshape, as
    # elementwise fusion folds a collapse_shape back into the reduction.
    hw = dims_product(b, dims[2:])
    xc = reshape_with_shape(b, x, dims[:2] + [hw])
    init = b.full(dims[:2], et, 0.0 if kind == "avg" else float("-inf"))
    red = b.generic([xc], [init], [affine_map(3, [0, 1, 2]), affine_map(3, [0, 1])],
                    ["parallel", "parallel", "reduction"],
                    lambda v, acc: arith.addf(acc, v) if kind == "avg"
                    else arith.maximumf(acc, v))[0]
    red = expand(b, red, [[0], [1, *range(2, r)]], out_dims)
    if kind == "max":
        return [red]
    if isinstance(hw, int):
        cnt = b.const(float(hw), et)
    else:
        cnt = arith.uitofp(et, arith.index_cast(ir.IntegerType.get_signless(64), hw))
    return [b.map_elementwise([red], out_dims, et, lambda v: arith.divf(v, cnt))]


@lowering("GlobalAveragePool", 1, 22)
def lower_global_average_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "avg")


@lowering("GlobalMaxPool", 1, 22)
def lower_global_max_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "max")


@lowering("MaxUnpool", 9, 11, 22)
def lower_max_unpool(op: OnnxOp, b: LoweringContext):
    """Zeros of the output shape, then X's elements written in order (a later
    duplicate index wins, as onnx.reference) through an ``scf.for`` nest over X
    carrying the output (the Scatter lowerings' form). An index is flat into
    the inferred shape [N, C, (in - 1) * s + k - pads...] (even when
    ``output_shape`` is given: the inferred block is its leading corner, as
    onnx.reference and the node tests) and is checked to be in range before
    the loop; ``output_shape`` must be at least the inferred shape."""
    x, ind = op.input(0), op.input(1)
    r = b.ranked(op, x).rank
    if r < 3:
        op.fail("input 'X' must have rank >= 3 (N, C, spatial...)")
    if b.ranked(op, ind, "input 'I'").rank != r:
        op.fail(f"input 'I' must have the rank of input 'X' ({r})")
    for k in range(r):
        require_same_dim(op, b, ind, k, x, k, "I", "X")
    kernel, strides, pads = unpool_window(op, r - 2)
    chk = checks(op, b)
    inferred = unpool_inferred(b.ixdims(x), kernel, strides, pads)
    for i, d in enumerate(inferred[2:]):
        chk.require(D.ge(d, 0), f"spatial axis {i}: the inferred output size {{0}} is "
                    f"negative", d)
    out = inferred
    if op.input(2) is not None:
        out = int_elements(op, b, op.input(2), r, "output_shape")
        for k, (o, d) in enumerate(zip(out, inferred)):
            chk.require(D.ge(o, d), f"output_shape[{k}] = {{0}} is smaller than the "
                        f"inferred size {{1}} of dim {k}", o, d)
    out_dims = [index_of(d) for d in fit_result(op, b, out)]
    total = D.product(inferred)
    require_indices(op, b, ind, index_of(total), "the inferred output of N*C*spatial "
                    "elements", negative=False)
    et = x.type.element_type
    # divisors of the flat index, 0 made 1 (only an empty output has a 0 dim,
    # and then no index passed the check)
    divs = [b.index(max(d, 1)) if D.is_static(d) else
            arith.maxui(index_of(d), b.index(1)) for d in inferred[1:]]

    def body(ivs, carried):
        (acc,) = carried
        f = to_index(tensor.extract(ind, ivs))
        coords = []
        for d in reversed(divs):
            coords.append(arith.remui(f, d))
            f = arith.divui(f, d)
        coords.append(f)
        return [tensor.insert(tensor.extract(x, ivs), acc, coords[::-1])]
    return for_nest(b, b.dims(x), [b.full(out_dims, et, 0)], body)
