"""Unique (11, 28), computed at run time in scf loops (onnxruntime's order).

The entries are X's elements (no ``axis``: X flattened) or X's slices
along ``axis`` (compared lexicographically in row-major order, as
onnxruntime does). Steps:

1. a stable merge sort of the entry numbers 0..n-1 by value
   (``merge_sort.py``): equal entries end up adjacent, first occurrence
   first;
2. one walk over the sorted order numbers the groups of equal entries
   (``group[e]``), and records each group's first entry and count: U,
   the number of groups, is now known;
3. the output position of a group is its number (``sorted=1``) or its
   rank by first occurrence (``sorted=0``, one walk over 0..n-1);
4. the outputs, of U entries (``unique_dims``), are allocated and filled.

Equality is "neither is less" (``<`` on the values, as onnxruntime's
``std::map``): -0.0 equals 0.0 and Y keeps the first occurrence.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.dialects.onnx.ops.unique import unique_axis, unique_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, index_t, is_float
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest, if_then_else
from onnx_mlir_py.passes.onnx_to_linalg.merge_sort import iota_buffer, sort_indices
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, insert_slice, to_index

I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731
P = arith.CmpIPredicate


def _flatten(x: ir.Value) -> ir.Value:
    t = x.type
    r, et = t.rank, t.element_type
    if r == 1:
        return x
    n = math.prod(t.shape) if t.has_static_shape else DYN
    ft = ir.RankedTensorType.get([n], et)
    if r == 0:
        return tensor.expand_shape(ft, x, ir.ArrayAttr.get([]), [], [1])
    return collapse(x, [list(range(r))], ft)


def _lt(a: ir.Value, c: ir.Value, unsigned: bool) -> ir.Value:
    if is_float(a.type):
        return arith.cmpf(arith.CmpFPredicate.OLT, a, c)
    return arith.cmpi(P.ult if unsigned or a.type.width == 1 else P.slt, a, c)


def _less_fn(b: LoweringContext, x: ir.Value, axis: int, unsigned: bool):
    """less(i, j): entry i of x along axis sorts before entry j."""
    r = x.type.rank
    if r == 1:
        return lambda i, j: _lt(tensor.extract(x, [i]), tensor.extract(x, [j]), unsigned)
    others = [b.dim(x, k) for k in range(r) if k != axis]
    i1 = ir.IntegerType.get_signless(1)

    def less(i, j):
        def body(ivs, carried):
            decided, res = carried
            at_i, at_j = list(ivs), list(ivs)
            at_i.insert(axis, i)
            at_j.insert(axis, j)
            vi, vj = tensor.extract(x, at_i), tensor.extract(x, at_j)
            lt, gt = _lt(vi, vj, unsigned), _lt(vj, vi, unsigned)
            return [arith.ori(decided, arith.ori(lt, gt)), arith.select(decided, res, lt)]
        false = arith.constant(i1, 0)
        return for_nest(b, others, [false, false], body)[1]
    return less


def _groups(b: LoweringContext, n, perm, off, less):
    """Walk the sorted order: (group [n], first [n], count [n], U)."""
    i64 = I64()
    inits = [b.empty([n], i64) for _ in range(3)] + [b.index(0)]

    def body(ivs, carried):
        grp, first, cnt, g = carried
        (k,) = ivs
        p = to_index(tensor.extract(perm, [arith.addi(off, k)]))
        prev = to_index(tensor.extract(
            perm, [arith.addi(off, arith.maxsi(arith.subi(k, b.index(1)), b.index(0)))]))
        new = arith.ori(arith.cmpi(P.eq, k, b.index(0)), less(prev, p))
        g = arith.addi(g, arith.index_cast(index_t(), arith.extui(i64, new)))
        gid = arith.subi(g, b.index(1))
        grp = tensor.insert(arith.index_cast(i64, gid), grp, [p])

        def start():
            return [tensor.insert(arith.index_cast(i64, p), first, [gid]),
                    tensor.insert(b.const(1, i64), cnt, [gid])]

        def more():
            c = arith.addi(tensor.extract(cnt, [gid]), b.const(1, i64))
            return [first, tensor.insert(c, cnt, [gid])]
        first, cnt = if_then_else(new, [first.type, cnt.type], start, more)
        return [grp, first, cnt, g]
    return for_nest(b, [n], inits, body)


def _positions_by_first_occurrence(b: LoweringContext, n, u, grp, first) -> ir.Value:
    """pos[g] = rank of group g by its first entry (sorted=0)."""
    i64 = I64()

    def body(ivs, carried):
        pos, c = carried
        (i,) = ivs
        gi = to_index(tensor.extract(grp, [i]))
        is_first = arith.cmpi(P.eq, to_index(tensor.extract(first, [gi])), i)
        return if_then_else(
            is_first, [pos.type, index_t()],
            lambda: [tensor.insert(arith.index_cast(i64, c), pos, [gi]),
                     arith.addi(c, b.index(1))],
            lambda: [pos, c])
    return for_nest(b, [n], [b.empty([u], i64), b.index(0)], body)[0]


@lowering("Unique", 11, 28)
def lower_unique(op: OnnxOp, b: LoweringContext):
    x0 = op.input(0)
    t = b.ranked(op, x0)
    et = t.element_type
    if not (is_float(et) or isinstance(et, ir.IntegerType)):
        op.fail(f"element type {et} is not supported")
    unsigned = b.unsigned(x0)
    axis = unique_axis(op, t.rank)
    x, ax = (_flatten(x0), 0) if axis is None else (x0, axis)
    r = x.type.rank
    n = b.as_index(b.dim(x, ax))
    less = _less_fn(b, x, ax, unsigned)
    perm, off = sort_indices(b, iota_buffer(b, n), n, n, less)
    grp, first, cnt, u = _groups(b, n, perm, off, less)
    sorted_ = bool(op.attrs.sorted)
    pos = None if sorted_ else _positions_by_first_occurrence(b, n, u, grp, first)
    dims = [[index_of(d) for d in ds]
            for ds in unique_dims(b.ixdims(x0), axis, wrap(u))]
    slots = result_slots(op)
    i64 = I64()
    outs = {k: b.empty(dims[k], et if k == 0 else i64) for k in slots if k != 2}
    order = [k for k in (0, 1, 3) if k in outs]
    sizes = [b.dim(x, k) for k in range(r)]
    sizes[ax] = 1

    def fill(ivs, carried):
        (g,) = ivs
        src = to_index(tensor.extract(first, [g]))
        dst = g if pos is None else to_index(tensor.extract(pos, [g]))
        new = []
        for k, acc in zip(order, carried):
            if k == 0:
                o_src, o_dst = [0] * r, [0] * r
                o_src[ax], o_dst[ax] = src, dst
                piece = extract_slice(b, x, o_src, sizes)
                new.append(insert_slice(piece, acc, o_dst, sizes))
            else:
                v = tensor.extract(first if k == 1 else cnt, [g])
                new.append(tensor.insert(v, acc, [dst]))
        return new
    filled = dict(zip(order, for_nest(b, [u], [outs[k] for k in order], fill)))
    if 2 in slots:
        filled[2] = grp if pos is None else _inverse(b, n, grp, pos)
    return [filled[k] for k in slots]


def _inverse(b: LoweringContext, n, grp: ir.Value, pos: ir.Value) -> ir.Value:
    def body(ivs, carried):
        (i,) = ivs
        p = tensor.extract(pos, [to_index(tensor.extract(grp, [i]))])
        return [tensor.insert(p, carried[0], [i])]
    return for_nest(b, [n], [b.empty([n], I64())], body)[0]
