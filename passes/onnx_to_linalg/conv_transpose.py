"""ConvTranspose (1-D..N-D, groups, strides, dilations, pads, output_padding,
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
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.conv import conv_transpose_dims, opt_attr, window
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to, conv_nd
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, fit_result, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, insert_slice, loop_index


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
        return [y]
    full_map = affine_map(r, list(range(r)))
    return b.generic([y, bias], [b.empty(out_dims, et)], [full_map, affine_map(r, [1]), full_map],
                     ["parallel"] * r, lambda v, bb, _o: arith.addf(v, bb))
