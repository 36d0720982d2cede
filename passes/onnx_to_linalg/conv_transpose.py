"""ConvTranspose (1-D..N-D, groups, strides, dilations, pads, output_padding,
output_shape, auto_pad) -> a direct convolution of the stride-dilated,
padded input with the flipped, in/out-swapped kernel:

    xd = zeros; xd[.., lo + i*s] = x[.., i]    (tensor.insert_slice, stride s)
    y  = conv_nd(xd, flip(w)^T, stride 1, dilation d)

with lo = d*(K-1) - pad_begin (a negative lo / hi crops with extract_slice).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import tensor

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float
from .conv import conv_nd
from .reshape import collapse, expand


def _attr(op: OnnxOp, name: str, default):
    v = getattr(op.attrs, name)
    return list(v) if v else default


def _pads(op: OnnxOp, xs, kernel, strides, dil, out_pad, out_sizes):
    ns = len(kernel)
    auto = op.attrs.auto_pad
    auto = auto.decode() if isinstance(auto, bytes) else auto
    explicit_shape = bool(op.attrs.output_shape)
    if auto == "NOTSET" and not explicit_shape:
        p = _attr(op, "pads", [0] * (2 * ns))
        return p[:ns], p[ns:]
    if auto == "VALID" and not explicit_shape:
        return [0] * ns, [0] * ns
    pb, pe = [], []
    for i in range(ns):
        total = strides[i] * (xs[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1 \
            - out_sizes[i]
        if auto == "SAME_UPPER":
            pb.append(total // 2)
            pe.append(total - total // 2)
        else:
            pb.append(total - total // 2)
            pe.append(total // 2)
    return pb, pe


def _flip_swap(b: LoweringContext, w: ir.Value, g: int) -> ir.Value:
    """w (C, M/g, k...) -> w' (M, C/g, k...) with w'[g*Mg+f, c, k] = w[g*Cg+c, f, K-1-k]."""
    shp = list(w.type.shape)
    r = len(shp)
    c, mg, ks = shp[0], shp[1], shp[2:]
    et = w.type.element_type
    w5 = expand(b, w, [[0, 1]] + [[k + 1] for k in range(1, r)], [g, c // g, mg] + ks)
    nd = r + 1  # iteration (g, f, c, k...)
    D = ir.AffineDimExpr.get
    flip = [ir.AffineExpr.get_add(ir.AffineConstantExpr.get(ks[i] - 1),
                                  ir.AffineExpr.get_mul(D(3 + i), ir.AffineConstantExpr.get(-1)))
            for i in range(len(ks))]
    in_map = ir.AffineMap.get(nd, 0, [D(0), D(2), D(1)] + flip)
    out = b.empty([g, mg, c // g] + ks, et)
    y5 = b.generic([w5], [out], [in_map, affine_map(nd, list(range(nd)))], ["parallel"] * nd,
                   lambda v, _o: v)[0]
    return collapse(y5, [[0, 1]] + [[k] for k in range(2, nd)],
                    ir.RankedTensorType.get([g * mg, c // g] + ks, et))


@lowering("ConvTranspose", 1, 11, 22)
def lower_conv_transpose(op: OnnxOp, b: LoweringContext):
    x, w, bias = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    if r < 3 or b.ranked(op, w).rank != r:
        op.fail(f"input rank {r} / weight rank {w.type.rank} do not match")
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float ConvTranspose is supported")
    if any(w.type.is_dynamic_dim(i) for i in range(r)):
        op.fail("weights must have a static shape")
    ns = r - 2
    xs = list(op.shape(x))
    if any(d is None for d in xs[2:]):
        op.fail("spatial dims must be static")
    out_t = b.result_type(op)
    if any(out_t.is_dynamic_dim(k) for k in range(2, r)):
        op.fail("the result's spatial dims must be static (run shape-inference)")
    g = op.attrs.group
    kernel = _attr(op, "kernel_shape", list(w.type.shape[2:]))
    strides = _attr(op, "strides", [1] * ns)
    dil = _attr(op, "dilations", [1] * ns)
    out_pad = _attr(op, "output_padding", [0] * ns)
    out_sizes = list(out_t.shape[2:])
    pb, pe = _pads(op, xs[2:], kernel, strides, dil, out_pad, out_sizes)
    # stride-dilate and pad the input
    lo = [dil[i] * (kernel[i] - 1) - pb[i] for i in range(ns)]
    need = [out_sizes[i] + dil[i] * (kernel[i] - 1) for i in range(ns)]  # conv input size
    dil_size = [(xs[2 + i] - 1) * strides[i] + 1 for i in range(ns)]
    hi = [need[i] - lo[i] - dil_size[i] for i in range(ns)]
    lo_p, hi_p = [max(v, 0) for v in lo], [max(v, 0) for v in hi]
    full = [lo_p[i] + dil_size[i] + hi_p[i] for i in range(ns)]
    n, c = b.dim(x, 0), b.dim(x, 1)
    dyn = [v for v in (n, c) if not isinstance(v, int)]
    st = [v if isinstance(v, int) else ir.ShapedType.get_dynamic_size() for v in (n, c)]
    z = b.full([n, c] + full, et, 0.0)
    xd = tensor.insert_slice(x, z, [], dyn, [], [0, 0] + lo_p, st + xs[2:],
                             [1, 1] + strides)
    if any(v < 0 for v in lo + hi):
        off = [max(-v, 0) for v in lo]
        xd = tensor.extract_slice(b.type_of([n, c] + need, et), xd, [], dyn, [],
                                  [0, 0] + off, st + need, [1] * r)
    wt = _flip_swap(b, w, g)
    return [conv_nd(op, b, xd, wt, bias, pads=([0] * ns, [0] * ns), strides=[1] * ns, dil=dil)]
