"""Conv: 2-D (NCHW) -> linalg.conv_2d_nchw_fchw / depthwise_conv_2d_nchw_chw /
conv_2d_ngchw_gfchw (grouped); 1-D, 3-D, ... -> one grouped direct-convolution
linalg.generic (``conv_nd``). Zero padding with tensor.pad, bias add."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, linalg

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float, pad
from .dims_ir import index_of
from .reshape import collapse, expand


def spatial_params(op: OnnxOp, in_shape, kernel, n_spatial: int, has_dilations=True):
    """(pads_begin, pads_end, strides, dilations), resolving auto_pad."""
    strides = op.attrs.strides or [1] * n_spatial
    dil = (op.attrs.dilations if has_dilations else None) or [1] * n_spatial
    pads = op.attrs.pads or [0] * (2 * n_spatial)
    auto = op.attrs.auto_pad
    if isinstance(auto, bytes):
        auto = auto.decode()
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * n_spatial)
        for i in range(n_spatial):
            size = in_shape[i]
            if size is None:
                op.fail("auto_pad SAME needs static spatial dims")
            out = -(-size // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - size)
            small, big = total // 2, total - total // 2
            pads[i], pads[i + n_spatial] = (small, big) if auto == "SAME_UPPER" else (big, small)
    elif auto == "VALID":
        pads = [0] * (2 * n_spatial)
    return list(pads[:n_spatial]), list(pads[n_spatial:]), list(strides), list(dil)


def conv_out_dims(op: OnnxOp, b: LoweringContext, x, xp, kernel, strides, dil) -> list:
    """Result dims of a convolution: N from ``x``, a dynamic spatial dim k
    from the padded input ``xp``: (padded - effective kernel) // stride + 1."""
    def dyn(k):
        if k == 0:
            return b.dim(x, 0)
        if k == 1:
            op.fail("the output channel dim must be static")
        i = k - 2
        out = (b.ixdim(xp, k) - ((kernel[i] - 1) * dil[i] + 1)) // strides[i] + 1
        return index_of(out)
    return b.out_dims(op, 0, dyn)


@lowering("Conv", 1, 11, 22)
def lower_conv(op: OnnxOp, b: LoweringContext):
    x, w, bias = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    if r < 3 or b.ranked(op, w).rank != r:
        op.fail(f"input rank {r} / weight rank {w.type.rank} are not a 1-D..N-D convolution")
    if r != 4:
        return [conv_nd(op, b, x, w, bias)]
    out_t = b.result_type(op)
    et = out_t.element_type
    if not is_float(et):
        op.fail("only float convolution is supported")
    wshape = list(op.shape(w))
    if any(d is None for d in wshape):
        op.fail("weights must have a static shape")
    kernel = op.attrs.kernel_shape or wshape[2:]
    xs = list(op.shape(x))
    pb, pe, strides, dil = spatial_params(op, xs[2:], kernel, 2)
    xp = pad(b, x, [0, 0] + pb, [0, 0] + pe, 0.0)
    g = op.attrs.group
    m, cg = wshape[0], wshape[1]
    c = xs[1]
    if c is None:
        op.fail("the channel dim must be static")
    if c != cg * g or m % g:
        op.fail(f"channels {c} / weights {wshape} do not match group {g}")
    out_dims = conv_out_dims(op, b, x, xp, kernel, strides, dil)
    kw = dict(strides=strides, dilations=dil)
    if g == 1:
        y = linalg.conv_2d_nchw_fchw(xp, w, outs=[b.full(out_dims, et, 0.0)], **kw)
    elif g == c and m == c:  # depthwise, multiplier 1
        w3 = collapse(w, [[0, 1], [2], [3]], ir.RankedTensorType.get([m] + wshape[2:], et))
        y = linalg.depthwise_conv_2d_nchw_chw(xp, w3, outs=[b.full(out_dims, et, 0.0)], **kw)
    else:  # grouped: (N, G, C/G, H, W) x (G, M/G, C/G, kh, kw)
        xd = b.dims(xp)
        x5 = expand(b, xp, [[0], [1, 2], [3], [4]], [xd[0], g, c // g, xd[2], xd[3]])
        w5 = expand(b, w, [[0, 1], [2], [3], [4]], [g, m // g] + wshape[1:])
        o5 = b.full([out_dims[0], g, m // g] + out_dims[2:], et, 0.0)
        y5 = linalg.conv_2d_ngchw_gfchw(x5, w5, outs=[o5], **kw)
        y = collapse(y5, [[0], [1, 2], [3], [4]], b.type_of(out_dims, et))
    if bias is None:
        return [y]
    res = b.empty(out_dims, et)
    return b.generic([y, bias], [res], [affine_map(4, [0, 1, 2, 3]), affine_map(4, [1]),
                                        affine_map(4, [0, 1, 2, 3])],
                     ["parallel"] * 4, lambda s, bb, _o: arith.addf(s, bb))


def conv_nd(op: OnnxOp, b: LoweringContext, x, w, bias, pads=None, strides=None, dil=None):
    """Grouped N-D convolution as linalg.generic over (N, G, M/G, C/G, spatial)
    views: iteration (n, g, f, o_1..o_k, c, k_1..k_k). ``pads`` etc. default to
    the op's attributes (auto_pad resolved)."""
    r = x.type.rank
    ns = r - 2
    out_t = b.result_type(op)
    et = out_t.element_type
    if not is_float(et):
        op.fail("only float convolution is supported")
    wshape = list(w.type.shape)
    if any(w.type.is_dynamic_dim(i) for i in range(r)):
        op.fail("weights must have a static shape")
    xs = list(op.shape(x)) if pads is None else [None] * r
    if pads is None:
        kernel = op.attrs.kernel_shape or wshape[2:]
        pb, pe, strides, dil = spatial_params(op, xs[2:], kernel, ns)
    else:
        pb, pe = pads
    xp = pad(b, x, [0, 0] + pb, [0, 0] + pe, 0.0)
    g = op.attrs.group
    m, cg = wshape[0], wshape[1]
    c = None if x.type.is_dynamic_dim(1) else x.type.shape[1]
    if c is None or c != cg * g or m % g:
        op.fail(f"channels {c} / weights {wshape} do not match group {g}")
    out_dims = conv_out_dims(op, b, x, xp, wshape[2:], strides, dil)
    xd = b.dims(xp)
    x5 = expand(b, xp, [[0], [1, 2]] + [[k + 1] for k in range(2, r)],
                [xd[0], g, cg] + xd[2:])
    w5 = expand(b, w, [[0, 1]] + [[k + 1] for k in range(1, r)], [g, m // g] + wshape[1:])
    o5 = b.full([out_dims[0], g, m // g] + out_dims[2:], et, 0.0)
    # dims: n=0 g=1 f=2 o=3..3+ns-1 c=3+ns k=4+ns..
    nd = 4 + 2 * ns
    o_, c_, k_ = 3, 3 + ns, 4 + ns
    D = ir.AffineDimExpr.get
    sp = [ir.AffineExpr.get_add(ir.AffineExpr.get_mul(D(o_ + i), ir.AffineConstantExpr.get(strides[i])),
                                ir.AffineExpr.get_mul(D(k_ + i), ir.AffineConstantExpr.get(dil[i])))
          for i in range(ns)]
    in_map = ir.AffineMap.get(nd, 0, [D(0), D(1), D(c_)] + sp)
    w_map = affine_map(nd, [1, 2, c_] + [k_ + i for i in range(ns)])
    out_map = affine_map(nd, [0, 1, 2] + [o_ + i for i in range(ns)])
    it = ["parallel"] * (3 + ns) + ["reduction"] * (1 + ns)
    y5 = b.generic([x5, w5], [o5], [in_map, w_map, out_map], it,
                   lambda a, ww, acc: arith.addf(acc, arith.mulf(a, ww)))[0]
    y = collapse(y5, [[0], [1, 2]] + [[k + 1] for k in range(2, r)], b.type_of(out_dims, et))
    if bias is None:
        return y
    full = affine_map(r, list(range(r)))
    return b.generic([y, bias], [b.empty(out_dims, et)], [full, affine_map(r, [1]), full],
                     ["parallel"] * r, lambda v, bb, _o: arith.addf(v, bb))[0]
