"""Conv: 2-D (NCHW) -> linalg.conv_2d_nchw_fchw / depthwise_conv_2d_nchw_chw /
conv_2d_ngchw_gfchw (grouped); 1-D as the 2-D conv of the [N, C, 1, L] view
(so -O3 runs it on the 2-D kernels: im2col + packed matmul, depthwise,
dynamic length); 3-D, ... -> one grouped direct-convolution linalg.generic
(``conv_nd``). Zero padding with tensor.pad, bias add.

Every dim may be dynamic (batch, channels, spatial, the weights' kernel
sizes): the output dims, padding (auto_pad SAME included) and the
channel/group/bias/kernel-size consistency come from the shape helper of
the Conv rule (``dialects/onnx/ops/conv.py::conv_dims``), evaluated on
run-time dims; what cannot be checked at compile time is checked in the
compiled code. ConvInteger/QLinearConv use ``convolve`` on i32 operands.

com.microsoft.NhwcConv (channels-last X, Y; W in Conv's layout): 2-D with
one group -> tensor.pad of X on H, W + linalg.conv_2d_nhwc_fhwc, its filter
relaid out [F, C, KH, KW] -> [F, KH, KW, C] (a constant one at compile time)
+ the bias on the last dim; ``--precision bf16`` rounds its operands as
Conv's (bf16.operands). Any other NhwcConv: Conv's lowering between
transposes.

ConvTranspose (1-D..N-D, groups, strides, dilations, pads, output_padding,
output_shape, auto_pad) -> a direct convolution of the stride-dilated,
padded input with the flipped, in/out-swapped kernel:

    xd = zeros; xd[.., lo + i*s] = x[.., i]    (tensor.insert_slice, stride s)
    y  = conv_nd(xd, flip(w)^T, stride 1, dilation d)

with lo = d*(K-1) - pad_begin (a negative lo / hi crops with extract_slice).
Output sizes and pads come from the rule's helper (``conv_transpose_dims``)
on run-time dims, so every dim may be dynamic (the weights' too).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.conv import (conv_dims, conv_transpose_dims, opt_attr,
                                                 to_channels_first, to_channels_last, window)
from onnx_mlir_py.passes.onnx_to_linalg import bf16
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float, pad, val
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, fit_result, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse, expand
from onnx_mlir_py.passes.onnx_to_linalg.gemm import is_half, narrow, widen
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, insert_slice, loop_index


def _static(v: ir.Value, i: int):
    return None if v.type.is_dynamic_dim(i) else int(v.type.shape[i])


def collapse_to(b: LoweringContext, v: ir.Value, groups, out_dims) -> ir.Value:
    """collapse_shape to the natural type of ``groups``, then cast to ``out_dims``."""
    t = v.type
    shape = []
    for g in groups:
        dims = [None if t.is_dynamic_dim(k) else t.shape[k] for k in g]
        p = 1
        for d in dims:
            p = None if p is None or d is None else p * d
        shape.append(ir.ShapedType.get_dynamic_size() if p is None else p)
    y = collapse(v, groups, ir.RankedTensorType.get(shape, t.element_type))
    return b.cast_to(y, b.type_of(out_dims, t.element_type))


def _mul_add(et):
    if is_float(et):    # (bf16 operands, --precision bf16: extended to et)
        return lambda a, w, acc: arith.addf(acc, arith.mulf(bf16.widen_to(a, et),
                                                            bf16.widen_to(w, et)))
    return lambda a, w, acc: arith.addi(acc, arith.muli(a, w))


def geometry(op: OnnxOp, b: LoweringContext, xd, w: ir.Value, bias: ir.Value | None,
             channels_last: bool = False):
    """The op's convolution of an input of dims ``xd`` (N, C, D1..Dn; dims.py
    run-time dims) with w (M, C/group, k1..kn): the shape checks of the Conv
    rule (``conv_dims``) and (group, output dims (N, M, O1..On) fitted to the
    result type (channels-last (N, O1..On, M) with ``channels_last``: NhwcConv),
    pads before / after per spatial axis, strides, dilations)."""
    g = opt_attr(op, "group", 1)
    win = window(op, len(xd) - 2, None, require_kernel=False)
    ctx = checks(op, b)
    out, axes = conv_dims(ctx, win, xd, b.ixdims(w),
                          b.ixdims(bias) if bias is not None else None, g,
                          opt_attr(op, "kernel_shape"))
    if channels_last:
        fitted = fit_result(op, b, [out[p] for p in to_channels_last(len(out))])
        out = [fitted[p] for p in to_channels_first(len(out))]
    else:
        out = fit_result(op, b, out)
    out_dims = [index_of(d) for d in out]
    lo, hi = [index_of(a.pad_begin) for a in axes], [index_of(a.pad_end) for a in axes]
    return g, out_dims, lo, hi, win.strides, win.dilations


def _check_ranks(op: OnnxOp, b: LoweringContext, x: ir.Value, w: ir.Value) -> int:
    r = b.ranked(op, x).rank
    if r < 3 or b.ranked(op, w).rank != r:
        op.fail(f"input rank {r} / weight rank {w.type.rank} are not a 1-D..N-D convolution")
    return r


def convolve(op: OnnxOp, b: LoweringContext, x: ir.Value, w: ir.Value, bias: ir.Value | None,
             et: ir.Type, add_bias: bool = True, channels_last: bool = False) -> ir.Value:
    """The op's convolution of x (N, C, D1..Dn) with w (M, C/group, k1..kn)
    into an ``et`` tensor; ``bias`` (M) is checked and, with add_bias, added.
    ``channels_last``: the op's result type is channels-last (NhwcConv: x is
    its input transposed; the result is still (N, M, O1..On))."""
    r = _check_ranks(op, b, x, w)
    g, out_dims, lo, hi, strides, dil = geometry(op, b, b.ixdims(x), w, bias, channels_last)
    zero = 0.0 if is_float(et) else 0
    c, m = _static(x, 1), _static(w, 0)
    x3 = x
    x, w = bf16.operands(b, et, x, w)       # --precision bf16: bf16 inputs, f32 sums
    if r == 3:
        # 1-D: the 2-D conv of the [N, C, 1, L] view, so -O3 runs it on
        # the 2-D kernels (im2col + packed matmul, depthwise with its pad
        # fused); bias added in 4-D (where the kernels fuse it), the result
        # viewed back
        x, w = view_2d(b, x), view_2d(b, w)
        out3, out_dims = out_dims, out_dims[:2] + [1, out_dims[2]]
        strides, dil = [1] + list(strides), [1] + list(dil)
        lo, hi = [0] + lo, [0] + hi
        r = 4
    xp = pad(b, x, [0, 0] + lo, [0, 0] + hi, zero)
    if r == 4:
        kw = dict(strides=strides, dilations=dil)
        if g == 1:
            y = linalg.conv_2d_nchw_fchw(xp, w, outs=[b.full(out_dims, et, zero)], **kw)
        elif g == c and m == c and _static(w, 1) == 1:  # depthwise, multiplier 1
            w3 = collapse_to(b, w, [[0, 1], [2], [3]], [m] + b.dims(w)[2:])
            y = linalg.depthwise_conv_2d_nchw_chw(xp, w3, outs=[b.full(out_dims, et, zero)], **kw)
        else:
            y = None
    if r != 4 or y is None:
        y = conv_nd(b, xp, w, g, strides, dil, out_dims, et)
    if bias is not None and add_bias:
        full = affine_map(r, list(range(r)))
        add = arith.addf if is_float(et) else arith.addi
        y = b.generic([y, bias], [b.empty(out_dims, et)], [full, affine_map(r, [1]), full],
                      ["parallel"] * r, lambda v, bb, _o: add(v, bb))[0]
    if x3.type.rank == 3:
        y = collapse_to(b, y, [[0], [1], [2, 3]], out3)
    return y


def view_2d(b: LoweringContext, v: ir.Value) -> ir.Value:
    """[A, B, L] viewed as [A, B, 1, L]."""
    d = b.dims(v)
    return expand(b, v, [[0], [1], [2, 3]], d[:2] + [1, d[2]])


def conv_nd(b: LoweringContext, xp: ir.Value, w: ir.Value, g: int, strides, dil, out_dims,
            et: ir.Type) -> ir.Value:
    """Grouped N-D convolution of the padded input as (2-D) linalg.conv_2d_ngchw_gfchw
    or a linalg.generic over (N, G, C/G, spatial) x (G, M/G, C/G, k) views,
    iteration (n, g, f, o_1..o_k, c, k_1..k_k). One dynamic size per expanded
    group: G is static."""
    r = xp.type.rank
    ns = r - 2
    if ns == 2 and g == 1:  # (the -O3 conv kernels take ngchw convs with G > 1 only)
        return linalg.conv_2d_nchw_fchw(xp, w, outs=[b.full(out_dims, et, 0.0 if is_float(et)
                                                             else 0)],
                                        strides=strides, dilations=dil)
    xd, wd = b.ixdims(xp), b.ixdims(w)
    x5 = expand(b, xp, [[0], [1, 2]] + [[k + 1] for k in range(2, r)],
                [index_of(xd[0]), g, index_of(xd[1] // g)] + [index_of(d) for d in xd[2:]])
    w5 = expand(b, w, [[0, 1]] + [[k + 1] for k in range(1, r)],
                [g, index_of(wd[0] // g)] + [index_of(d) for d in wd[1:]])
    mg = index_of(b.ixdim(w, 0) // g)
    o5 = b.full([out_dims[0], g, mg] + list(out_dims[2:]), et, 0.0 if is_float(et) else 0)
    if ns == 2:
        y5 = linalg.conv_2d_ngchw_gfchw(x5, w5, outs=[o5], strides=strides, dilations=dil)
    else:
        nd = 4 + 2 * ns  # dims: n=0 g=1 f=2 o=3..3+ns-1 c=3+ns k=4+ns..
        o_, c_, k_ = 3, 3 + ns, 4 + ns
        D = ir.AffineDimExpr.get
        sp = [ir.AffineExpr.get_add(
            ir.AffineExpr.get_mul(D(o_ + i), ir.AffineConstantExpr.get(strides[i])),
            ir.AffineExpr.get_mul(D(k_ + i), ir.AffineConstantExpr.get(dil[i])))
            for i in range(ns)]
        in_map = ir.AffineMap.get(nd, 0, [D(0), D(1), D(c_)] + sp)
        w_map = affine_map(nd, [1, 2, c_] + [k_ + i for i in range(ns)])
        out_map = affine_map(nd, [0, 1, 2] + [o_ + i for i in range(ns)])
        it = ["parallel"] * (3 + ns) + ["reduction"] * (1 + ns)
        y5 = b.generic([x5, w5], [o5], [in_map, w_map, out_map], it, _mul_add(et))[0]
    return collapse_to(b, y5, [[0], [1, 2]] + [[k + 1] for k in range(2, r)], out_dims)


@lowering("Conv", 1, 11, 22)
def lower_conv(op: OnnxOp, b: LoweringContext):
    et = b.result_type(op).element_type
    if not is_float(et):
        op.fail("only float convolution is supported")
    if is_half(et):  # f32 accumulation, rounded once (gemm.is_half)
        x, w, bias = (widen(b, op.input(i)) for i in range(3))
        return [narrow(b, convolve(op, b, x, w, bias, ir.F32Type.get()), et)]
    return [convolve(op, b, op.input(0), op.input(1), op.input(2), et)]


# -- com.microsoft.NhwcConv ------------------------------------------------------------

def _permute(b: LoweringContext, x: ir.Value, perm: list[int]) -> ir.Value:
    d = b.dims(x)
    return val(linalg.transpose(x, outs=[b.empty([d[p] for p in perm], x.type.element_type)],
                                permutation=perm))


def filter_hwc(b: LoweringContext, w: ir.Value) -> ir.Value:
    """w [F, C, KH, KW] as linalg.conv_2d_nhwc_fhwc's filter [F, KH, KW, C]:
    a static f32 constant relaid out now (a new constant: it stays one for
    bf16.operand's compile-time rounding and -O3's kernels), else a
    linalg.transpose."""
    arr = bf16.constant_f32(w)
    if arr is None:
        return _permute(b, w, [0, 2, 3, 1])
    from onnx_mlir_py.ir_resources import resource_attr
    hwc = np.ascontiguousarray(arr.transpose(0, 2, 3, 1))
    t = ir.RankedTensorType.get(list(hwc.shape), w.type.element_type)
    return arith.constant(t, resource_attr(hwc, "nhwc_filter", t))


def _conv_nhwc(op: OnnxOp, b: LoweringContext, x: ir.Value, w: ir.Value,
               bias: ir.Value | None, et: ir.Type) -> ir.Value:
    """2-D, one group: tensor.pad of x on H, W + linalg.conv_2d_nhwc_fhwc
    (the filter relaid out by :func:`filter_hwc`) + the bias on the last dim."""
    xd = b.ixdims(x)
    _g, out, lo, hi, strides, dil = geometry(op, b, [xd[p] for p in to_channels_first(4)],
                                             w, bias, channels_last=True)
    out_dims = [out[p] for p in to_channels_last(4)]
    x, w = bf16.operands(b, et, x, filter_hwc(b, w))   # --precision bf16: as Conv's
    xp = pad(b, x, [0] + lo + [0], [0] + hi + [0], 0.0)
    y = linalg.conv_2d_nhwc_fhwc(xp, w, outs=[b.full(out_dims, et, 0.0)],
                                 strides=strides, dilations=dil)
    if bias is None:
        return y
    full = affine_map(4, [0, 1, 2, 3])
    return b.generic([y, bias], [b.empty(out_dims, et)], [full, affine_map(4, [3]), full],
                     ["parallel"] * 4, lambda v, bb, _o: arith.addf(v, bb))[0]


@lowering("NhwcConv", 1, domain="com.microsoft")
def lower_nhwc_conv(op: OnnxOp, b: LoweringContext):
    """Conv on channels-last X (N, D1..Dn, C) and Y (N, O1..On, M): 2-D with
    one group as linalg.conv_2d_nhwc_fhwc (:func:`_conv_nhwc`); any other
    (groups, depthwise, 1-D, 3-D, ...) as Conv's lowering of the transposed
    input, its result transposed back."""
    x, w, bias = op.input(0), op.input(1), op.input(2)
    et = b.result_type(op).element_type
    if not is_float(et):
        op.fail("only float convolution is supported")
    half = is_half(et)
    ct = ir.F32Type.get() if half else et
    if half:  # f32 accumulation, rounded once (gemm.is_half)
        x, w, bias = (widen(b, v) for v in (x, w, bias))
    r = _check_ranks(op, b, x, w)
    if r == 4 and opt_attr(op, "group", 1) == 1:
        y = _conv_nhwc(op, b, x, w, bias, ct)
    else:
        y = convolve(op, b, _permute(b, x, to_channels_first(r)), w, bias, ct,
                     channels_last=True)
        y = _permute(b, y, to_channels_last(r))
    return [narrow(b, y, et) if half else y]


def _flip_swap(b: LoweringContext, w: ir.Value, g: int) -> ir.Value:
    """w (C, M/g, k...) -> w' (M, C/g, k...) with w'[g*Mg+f, c, k] = w[g*Cg+c, f, K-1-k]."""
    r = w.type.rank
    et = w.type.element_type
    wd = b.ixdims(w)
    cg, mg, ks = wd[0] // g, wd[1], wd[2:]
    w5 = expand(b, w, [[0, 1]] + [[k + 1] for k in range(1, r)],
                [g, index_of(cg), index_of(mg)] + [index_of(k) for k in ks])
    nd = r + 1  # iteration (g, f, c, k...)
    out = b.empty([g, index_of(mg), index_of(cg)] + [index_of(k) for k in ks], et)
    ident = affine_map(nd, list(range(nd)))
    if all(D.is_static(k) for k in ks):
        E = ir.AffineDimExpr.get
        flip = [ir.AffineExpr.get_add(ir.AffineConstantExpr.get(ks[i] - 1),
                                      ir.AffineExpr.get_mul(E(3 + i), ir.AffineConstantExpr.get(-1)))
                for i in range(len(ks))]
        in_map = ir.AffineMap.get(nd, 0, [E(0), E(2), E(1)] + flip)
        y5 = b.generic([w5], [out], [in_map, ident], ["parallel"] * nd, lambda v, _o: v)[0]
    else:  # a dynamic kernel size: gather w5[g, c, f, K-1-k]
        def body(_o):
            i = [wrap(loop_index(k)) for k in range(nd)]
            src = [i[0], i[2], i[1]] + [ks[k] - 1 - i[3 + k] for k in range(len(ks))]
            return tensor.extract(w5, [b.as_index(index_of(v)) for v in src])
        y5 = b.generic([], [out], [ident], ["parallel"] * nd, body)[0]
    return collapse_to(b, y5, [[0, 1]] + [[k] for k in range(2, nd)],
                       [index_of(mg * g), index_of(cg)] + [index_of(k) for k in ks])


@lowering("ConvTranspose", 1, 11, 22)
def lower_conv_transpose(op: OnnxOp, b: LoweringContext):
    x, w, bias = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    if r < 3 or b.ranked(op, w).rank != r:
        op.fail(f"input rank {r} / weight rank {w.type.rank} do not match")
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float ConvTranspose is supported")
    if is_half(et):  # f32 accumulation and bias, rounded once (gemm.is_half)
        wide = [widen(b, v) for v in (x, w, bias)]
        return [narrow(b, _conv_transpose(op, b, *wide, r, ir.F32Type.get()), et)]
    return [_conv_transpose(op, b, x, w, bias, r, et)]


def _conv_transpose(op: OnnxOp, b: LoweringContext, x, w, bias, r: int, et: ir.Type):
    ns = r - 2
    g = op.attrs.group
    win = window(op, ns, None, require_kernel=False)
    ctx = checks(op, b)
    xd = b.ixdims(x)
    out, pads = conv_transpose_dims(ctx, win, xd, b.ixdims(w),
                                    b.ixdims(bias) if bias is not None else None, g,
                                    opt_attr(op, "kernel_shape"),
                                    opt_attr(op, "output_padding") or [0] * ns,
                                    opt_attr(op, "output_shape"))
    out_dims = [index_of(d) for d in fit_result(op, b, out)]
    # stride-dilate and pad the input: conv input size out + ke - 1
    lo, hi, full, need = [], [], [], []
    for i, (pb, _pe, ke) in enumerate(pads):
        low = ke - 1 - pb
        need.append(wrap(out_dims[2 + i]) + ke - 1)
        dil_size = (xd[2 + i] - 1) * win.strides[i] + 1
        lo.append(low)
        hi.append(need[i] - low - dil_size)
        full.append(D.dmax(low, 0) + dil_size + D.dmax(hi[i], 0))
    n, c = b.dim(x, 0), b.dim(x, 1)
    z = b.full([n, c] + [index_of(f) for f in full], et, 0.0)
    ix = [index_of(D.dmax(v, 0)) for v in lo]
    xdl = insert_slice(x, z, [0, 0] + ix, b.dims(x), [1, 1] + list(win.strides))
    if not all(D.is_static(v) and v >= 0 for v in lo + hi):  # crop a negative lo / hi
        off = [index_of(D.dmax(0 - v, 0)) for v in lo]
        xdl = extract_slice(b, xdl, [0, 0] + off, [n, c] + [index_of(v) for v in need])
    wt = _flip_swap(b, w, g)
    y = conv_nd(b, xdl, wt, g, [1] * ns, win.dilations, out_dims, et)
    if bias is None:
        return y
    full_map = affine_map(r, list(range(r)))
    return b.generic([y, bias], [b.empty(out_dims, et)], [full_map, affine_map(r, [1]), full_map],
                     ["parallel"] * r, lambda v, bb, _o: arith.addf(v, bb))[0]
