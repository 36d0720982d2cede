"""TopK, NonZero, Compress.

TopK: two linalg.generics, no sequential loop. (1) rank of every element
along the axis = how many elements come before it in the ONNX order (better
value, or equal value and lower index: ONNX's tie rule; NaN above +inf, as
in onnxruntime and onnx.reference, so the order is total); (2) the result
position p takes the element whose rank is p (a reduction over the axis).
Ranks are a permutation, so every p < k is hit exactly once.

NonZero / Compress: data-dependent result size: count first (a linalg
reduction), allocate, then fill in order with an ``scf.for`` carrying the
result tensor and the write position.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, index_t,
                                                        is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest, if_then_else, to_i8_if_bool
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, insert_slice, loop_index,
                                                            norm_axis, scalar_of, to_index)

I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731


def _better(x: ir.Value, y: ir.Value, largest: bool, unsigned: bool) -> ir.Value:
    """x comes strictly before y in the sort order (floats: NaN above +inf, as
    in onnxruntime and onnx.reference: first when largest, last otherwise)."""
    if is_float(x.type):
        F = arith.CmpFPredicate
        if largest:  # x > y, or x NaN and y not
            return arith.ori(arith.cmpf(F.OGT, x, y),
                             arith.andi(arith.cmpf(F.UNO, x, x), arith.cmpf(F.ORD, y, y)))
        return arith.ori(arith.cmpf(F.OLT, x, y),  # x < y, or y NaN and x not
                         arith.andi(arith.cmpf(F.UNO, y, y), arith.cmpf(F.ORD, x, x)))
    P = arith.CmpIPredicate
    if unsigned or x.type.width == 1:
        return arith.cmpi(P.ugt if largest else P.ult, x, y)
    return arith.cmpi(P.sgt if largest else P.slt, x, y)


def _equal(x: ir.Value, y: ir.Value) -> ir.Value:
    """Same place in the sort order (floats: NaNs tie with each other)."""
    if is_float(x.type):
        F = arith.CmpFPredicate
        return arith.ori(arith.cmpf(F.OEQ, x, y),
                         arith.andi(arith.cmpf(F.UNO, x, x), arith.cmpf(F.UNO, y, y)))
    return arith.cmpi(arith.CmpIPredicate.eq, x, y)


def _topk(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r == 0:
        op.fail("input must have rank >= 1")
    axis = norm_axis(op, op.attrs.axis, r)
    largest = op.version < 11 or bool(op.attrs.largest)
    uns = b.unsigned(x)
    et = x.type.element_type
    i64 = I64()
    dims = b.dims(x)
    # (1) rank[..., i, ...] = #{j : x_j before x_i}; loops (dims..., j)
    n = r + 1
    at_j = [k if k != axis else r for k in range(r)]
    ident = affine_map(n, list(range(r)))

    def rank_body(xi, xj, acc):
        i, j = loop_index(axis), loop_index(r)
        tie = arith.andi(_equal(xj, xi), arith.cmpi(arith.CmpIPredicate.ult, j, i))
        before = arith.ori(_better(xj, xi, largest, uns), tie)
        return arith.addi(acc, arith.extui(i64, before))
    ranks = b.generic([x, x], [b.full(dims, i64, 0)], [ident, affine_map(n, at_j), ident],
                      ["parallel"] * r + ["reduction"], rank_body)[0]
    # (2) out[..., p, ...] = x[..., i, ...] where rank_i == p; loops (out dims..., i)
    if op.version == 1:
        k_val = op.attrs.k
    else:
        k_val = to_index(scalar_of(b, op.input(1)))
        kd, nd = wrap(k_val), b.ixdim(x, axis)
        checks(op, b).require(D.both(D.ge(kd, 0), D.le(kd, nd)),
                              f"k is {{0}} but the input has {{1}} elements on axis {axis}",
                              kd, nd)
    out_dims = b.out_dims(op, 0, lambda d: k_val if d == axis else b.dim(x, d))
    vals0 = b.full(out_dims, et, 0)
    idx0 = b.full(out_dims, i64, 0)

    def pick_body(xv, rk, av, ai):
        p = arith.index_cast(i64, loop_index(axis))
        i = arith.index_cast(i64, loop_index(r))
        hit = arith.cmpi(arith.CmpIPredicate.eq, rk, p)
        return [arith.select(hit, xv, av), arith.select(hit, i, ai)]
    vals, inds = b.generic([x, ranks], [vals0, idx0],
                           [affine_map(n, at_j), affine_map(n, at_j), ident, ident],
                           ["parallel"] * r + ["reduction"], pick_body)
    return [vals, inds]


lowering("TopK", 1, 10, 11, 24)(_topk)


def _count_true(b: LoweringContext, x: ir.Value) -> ir.Value:
    """Number of non-zero elements of x (any rank) as an index Value."""
    r = x.type.rank
    i64 = I64()
    et = x.type.element_type
    zero = b.const(0, et) if not is_float(et) else b.const(0.0, et)

    def body(v, acc):
        nz = (arith.cmpf(arith.CmpFPredicate.UNE, v, zero) if is_float(et)
              else arith.cmpi(arith.CmpIPredicate.ne, v, zero))
        return arith.addi(acc, arith.extui(i64, nz))
    cnt = b.generic([x], [b.full([], i64, 0)],
                    [affine_map(r, list(range(r))), ir.AffineMap.get(r, 0, [])],
                    ["reduction"] * r, body)[0]
    return to_index(tensor.extract(cnt, []))


def _nonzero_scalar(v: ir.Value) -> ir.Value:
    et = v.type
    if is_float(et):
        return arith.cmpf(arith.CmpFPredicate.UNE, v, arith.constant(et, 0.0))
    return arith.cmpi(arith.CmpIPredicate.ne, v, arith.constant(et, 0))


@lowering("NonZero", 9, 13)
def lower_nonzero(op: OnnxOp, b: LoweringContext):
    x = to_i8_if_bool(b, op.input(0))
    r = b.ranked(op, x).rank
    i64 = I64()
    if r == 0:  # a scalar: shape (0, n) with n = 1 if x != 0  -> index list is empty
        op.fail("NonZero of a 0-D tensor is not supported")
    count = _count_true(b, x)
    out = b.empty([r, count], i64)
    idx_t = index_t()

    def body(ivs, carried):
        acc, pos = carried
        nz = _nonzero_scalar(tensor.extract(x, ivs))

        def write():
            a = acc
            for d, iv in enumerate(ivs):
                a = tensor.insert(arith.index_cast(i64, iv), a, [b.index(d), pos])
            return [a, arith.addi(pos, b.index(1))]
        return if_then_else(nz, [acc.type, idx_t], write, lambda: [acc, pos])
    res, _ = for_nest(b, b.dims(x), [out, b.index(0)], body)
    return [res]


def _compress(op: OnnxOp, b: LoweringContext):
    x, cond = op.input(0), to_i8_if_bool(b, op.input(1))
    r = b.ranked(op, x).rank
    if b.ranked(op, cond, "condition").rank != 1:
        op.fail("condition must be 1-D")
    et = x.type.element_type
    if op.attrs.axis is not None:
        axis = norm_axis(op, op.attrs.axis, r)
    else:  # flatten
        if r != 1:
            n = 1
            dyn = False
            for k in range(r):
                dyn |= x.type.is_dynamic_dim(k)
                n *= 1 if x.type.is_dynamic_dim(k) else x.type.shape[k]
            ft = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size() if dyn else n], et)
            x = collapse(x, [list(range(r))], ft) if r > 0 else \
                tensor.expand_shape(ft, x, ir.ArrayAttr.get([]), [], [1])
        r, axis = 1, 0
    dims = b.dims(x)
    n_sel = arith.minsi(b.as_index(b.dim(cond, 0)), b.as_index(dims[axis]))
    c_used = extract_slice(b, cond, [0], [n_sel])
    count = _count_true(b, c_used)
    out_dims = list(dims)
    out_dims[axis] = count
    out = b.empty(out_dims, et)
    sizes = list(dims)
    sizes[axis] = 1

    def body(ivs, carried):
        acc, pos = carried
        (i,) = ivs
        keep = _nonzero_scalar(tensor.extract(cond, [i]))

        def write():
            off = [0] * r
            off[axis] = i
            piece = extract_slice(b, x, off, sizes)
            off = [0] * r
            off[axis] = pos
            return [insert_slice(piece, acc, off, sizes), arith.addi(pos, b.index(1))]
        return if_then_else(keep, [acc.type, index_t()], write, lambda: [acc, pos])
    res, _ = for_nest(b, [n_sel], [out, b.index(0)], body)
    return [res]


lowering("Compress", 9, 11, 28)(_compress)
