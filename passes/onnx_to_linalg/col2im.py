"""Col2Im -> one linalg.generic: the result dims parallel, the block
position (k, flattened) a reduction. For result position p and block
position k along each image dim, the column is l_i = (p_i + pad_i -
k_i * dilation_i) / stride_i when that divides exactly and 0 <= l_i <
blocks_i; the input element [n, c * prod(block) + k, l (flattened)] is
added (read with tensor.extract). image_shape and block_shape may be run-time
values; the dims and their checks come from
dialects/onnx/ops/col2im.py::col2im_dims.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.col2im import col2im_attrs, col2im_dims, col2im_rank
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np, loop_index, to_index

I = arith.CmpIPredicate


def _values(b: LoweringContext, v, r: int) -> list:
    c = const_np(v)
    if c is not None:
        return [int(t) for t in c.reshape(-1)]
    return [wrap(to_index(tensor.extract(v, [b.index(i)]))) for i in range(r)]


@lowering("Col2Im", 18)
def lower_col2im(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 3:
        op.fail("input must be [N, C * prod(block_shape), L]")
    r = col2im_rank(op)
    t = b.result_type(op)
    if r is None and isinstance(t, ir.RankedTensorType):
        r = t.rank - 2      # the declared result's rank
    if r is None:
        op.fail("the number of image dims (image_shape's length) must be known at compile time")
    dil, strides, pads = col2im_attrs(op, r)
    for name, v in (("image_shape", op.input(1)), ("block_shape", op.input(2))):
        ln = b.ixdim(v, 0)
        checks(op, b).require(D.eq(ln, r), f"{name} has {{0}} values: expected {r}", ln)
    image, block = _values(b, op.input(1), r), _values(b, op.input(2), r)
    c, nb, out = col2im_dims(checks(op, b), b.ixdims(x), image, block, dil, strides, pads)
    et = x.type.element_type
    fl = is_float(et)
    out_dims = [index_of(d) for d in out]
    psize = index_of(D.product(block))
    bound = b.empty([psize], et)
    blk = [b.as_index(index_of(k)) for k in block]
    nbs = [b.as_index(index_of(n)) for n in nb]
    P = b.as_index(psize)
    n_out = 2 + r
    zero = b.index(0)

    def body(_bound, acc):
        ivs = [loop_index(k) for k in range(n_out)]
        kf = loop_index(n_out)
        ks, rest = [None] * r, kf
        for i in reversed(range(r)):      # row-major: the last block dim fastest
            ks[i] = arith.remui(rest, blk[i])
            rest = arith.divui(rest, blk[i])
        ok, lf = None, zero
        for i in range(r):
            q = arith.subi(arith.addi(ivs[2 + i], b.index(pads[i])),
                           arith.muli(ks[i], b.index(dil[i])))
            s = b.index(strides[i])
            li = arith.floordivsi(q, s)
            good = arith.andi(arith.andi(arith.cmpi(I.sge, q, zero),
                                         arith.cmpi(I.eq, arith.remsi(q, s), zero)),
                              arith.cmpi(I.slt, li, nbs[i]))
            ok = good if ok is None else arith.andi(ok, good)
            li = arith.select(good, li, zero)
            lf = arith.addi(arith.muli(lf, nbs[i]), li)
        ch = arith.addi(arith.muli(ivs[1], P), kf)
        v = tensor.extract(x, [ivs[0], ch, lf])
        s = arith.addf(acc, v) if fl else arith.addi(acc, v)
        return arith.select(ok, s, acc)
    init = b.full(out_dims, et, 0.0 if fl else 0)
    maps = [affine_map(n_out + 1, [n_out]), affine_map(n_out + 1, list(range(n_out)))]
    y = b.generic([bound], [init], maps, ["parallel"] * n_out + ["reduction"], body)[0]
    return [b.cast_to(y, b.result_type(op))]
