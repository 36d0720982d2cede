"""DeformConv (v19, v22) -> two linalg.generics (any number of spatial axes):

1. the sampled columns, one parallel generic over [N, C, k_1..k_n, O_1..O_n]:

       cols[b, c, k, o] = mask[b, g_o, k, o] *
           bilinear(X[b, c], o * stride - pad_begin + k * dilation + offset[b, g_o, k, :, o])

   (g_o = c / (C / offset_group); offset viewed as [N, offset_group, k.., n, O..],
   mask as [N, offset_group, k.., O..], 1 without it). The bilinear taps come
   from GridSample's ``pixel_taps`` ('zeros' padding: a tap outside X reads 0)
   and ``tap_sum``, in f32 (f64 for f64 X), as onnx.reference samples
   (GridSample with align_corners=1).
2. the grouped contraction with W over (c, k), as conv.py's ``conv_nd``
   iterates, over [N, G, C/G, k.., O..] x [G, M/G, C/G, k..] views; bias added
   and the result rounded to X's type once.

The output dims, pads (auto_pad included) and the channel/group/bias checks
come from Conv's ``conv_dims``; offset and mask are checked against them
(``deform_conv.deform_dims``), at run time where a dim is dynamic.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.conv import conv_dims, opt_attr, window
from onnx_mlir_py.dialects.onnx.ops.deform_conv import deform_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, fit_result, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.grid_sample import _F, pixel_taps, tap_sum
from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index


@lowering("DeformConv", 19, 22)
def lower_deform_conv(op: OnnxOp, b: LoweringContext):
    x, w, off, bias, mask = (op.input(i) for i in range(5))
    r = b.ranked(op, x).rank
    for v, what in ((w, "W"), (off, "offset"), (mask, "mask")):
        if v is not None and b.ranked(op, v, what).rank != r:
            op.fail(f"input '{what}' has rank {v.type.rank}: expected the rank {r} of X")
    if r < 3:
        op.fail(f"input 'X' has rank {r}: expected >= 3")
    et = x.type.element_type
    if not is_float(et):
        op.fail(f"only float DeformConv is supported (got {et})")
    f = _F(b, ir.F64Type.get() if et == ir.F64Type.get() else ir.F32Type.get())
    ns = r - 2
    g, og = opt_attr(op, "group", 1), opt_attr(op, "offset_group", 1)
    win = window(op, ns, None, require_kernel=False)
    chk = checks(op, b)
    xd, wd = b.ixdims(x), b.ixdims(w)
    out, axes = conv_dims(chk, win, xd, wd, b.ixdims(bias) if bias is not None else None, g,
                          opt_attr(op, "kernel_shape"))
    out = fit_result(op, b, out)
    kernel = wd[2:]
    deform_dims(chk, out, xd, kernel, b.ixdims(off),
                b.ixdims(mask) if mask is not None else None, og)
    ix = lambda d: b.as_index(index_of(d))  # noqa: E731
    k_total = 1
    for k in kernel:
        k_total = k_total * k
    c_per_og = ix(xd[1] // og)
    spatial = [ix(d) for d in xd[2:]]

    def sample(_o):
        iv = [wrap(loop_index(k)) for k in range(2 + 2 * ns)]
        n, c, ks, os = iv[0], iv[1], iv[2:2 + ns], iv[2 + ns:]
        grp = wrap(arith.divui(ix(c), c_per_og))
        kflat = ks[0]
        for i in range(1, ns):
            kflat = kflat * kernel[i] + ks[i]
        at = grp * k_total + kflat
        taps = []
        for i in range(ns):
            o = tensor.extract(off, [ix(n), ix(at * ns + i), *[ix(v) for v in os]])
            base = os[i] * win.strides[i] + ks[i] * win.dilations[i] - axes[i].pad_begin
            p = arith.addf(f.of_index(ix(base)), convert_scalar(o, False, f.ct))
            taps.append(pixel_taps(f, "linear", "zeros", p, spatial[i]))
        v = tap_sum(f, x, [ix(n), ix(c)], taps, False)
        if mask is not None:
            m = tensor.extract(mask, [ix(n), ix(at), *[ix(o) for o in os]])
            v = arith.mulf(v, convert_scalar(m, False, f.ct))
        return v
    nc = 2 + 2 * ns
    col_dims = [index_of(d) for d in xd[:2] + kernel + out[2:]]
    cols = b.generic([], [b.empty(col_dims, f.ct)], [affine_map(nc, list(range(nc)))],
                     ["parallel"] * nc, sample)[0]

    # y[n, g, f, o] = sum_{c, k} cols[n, g, c, k, o] * w[g, f, c, k]
    cg, mg = xd[1] // g, wd[0] // g
    cols5 = expand(b, cols, [[0], [1, 2]] + [[k + 1] for k in range(2, nc)],
                   [index_of(xd[0]), g, index_of(cg)] + col_dims[2:])
    w5 = expand(b, w, [[0, 1]] + [[k + 1] for k in range(1, r)],
                [g, index_of(mg)] + [index_of(d) for d in wd[1:]])
    nd = 4 + 2 * ns  # dims: n=0 g=1 f=2 o=3.. c=3+ns k=4+ns..
    o_, c_, k_ = 3, 3 + ns, 4 + ns
    sp_o, sp_k = [o_ + i for i in range(ns)], [k_ + i for i in range(ns)]
    out_dims = [index_of(d) for d in out]
    o5 = b.full([out_dims[0], g, index_of(mg)] + out_dims[2:], f.ct, 0.0)

    def mul_add(a, wv, acc):
        return arith.addf(acc, arith.mulf(a, convert_scalar(wv, False, f.ct)))
    y5 = b.generic([cols5, w5], [o5],
                   [affine_map(nd, [0, 1, c_] + sp_k + sp_o), affine_map(nd, [1, 2, c_] + sp_k),
                    affine_map(nd, [0, 1, 2] + sp_o)],
                   ["parallel"] * (3 + ns) + ["reduction"] * (1 + ns), mul_add)[0]
    y = collapse_to(b, y5, [[0], [1, 2]] + [[k + 1] for k in range(2, r)], out_dims)
    full = affine_map(r, list(range(r)))
    if bias is None and et == f.ct:
        return [y]
    if bias is None:
        return [b.generic([y], [b.empty(out_dims, et)], [full, full], ["parallel"] * r,
                          lambda v, _o: convert_scalar(v, False, et))[0]]
    return [b.generic([y, bias], [b.empty(out_dims, et)], [full, affine_map(r, [1]), full],
                      ["parallel"] * r,
                      lambda v, bb, _o: convert_scalar(
                          arith.addf(v, convert_scalar(bb, False, f.ct)), False, et))[0]]
