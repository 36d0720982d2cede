"""A stable sort of index lists in scf loops, for the lowerings whose
result order depends on the data (Unique, NonMaxSuppression).

    sort_indices(b, buf, half, n, less) -> (buf, off)

Bottom-up merge sort: ``buf`` is a ``tensor<?xi64>`` of ``2 * half``
entries (two halves, ``half >= n``) whose first ``n`` entries are the
items; each round merges runs of ``width`` items from one half into the
other (``scf.while`` over the widths 1, 2, 4, ..., ``scf.for`` over the
runs and over the merged positions), so every round updates ``buf`` in
place and nothing is allocated. ``less(a, b)`` (``a``, ``b``: the items,
``index`` values) gives an ``i1``; an item is placed after every equal
item that came before it (stable). The sorted items are
``buf[off : off + n]``. O(n log n) comparisons.
"""
from __future__ import annotations

from typing import Callable

import mlir.ir as ir
from mlir.dialects import arith, scf, tensor

from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, index_t
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, to_index

I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731


def _merge_round(b: LoweringContext, buf, src, dst, n, width, less) -> ir.Value:
    """Merge each pair of runs [lo, lo + width), [lo + width, lo + 2 width)
    of buf[src:] into buf[dst:]."""
    P = arith.CmpIPredicate
    step = arith.muli(width, b.index(2))
    i64 = I64()
    loop = scf.ForOp(b.index(0), n, step, [buf])
    with ir.InsertionPoint(loop.body):
        lo = loop.induction_variable
        mid = arith.minsi(arith.addi(lo, width), n)
        hi = arith.minsi(arith.addi(lo, step), n)
        last_l = arith.subi(mid, b.index(1))
        last_r = arith.maxsi(arith.subi(hi, b.index(1)), lo)

        def body(ivs, carried):
            acc, i, j = carried
            (k,) = ivs
            # clamp the read positions so that an exhausted run is never read
            # past its end (the value read is then unused)
            vi = tensor.extract(acc, [arith.addi(src, arith.minsi(i, last_l))])
            vj = tensor.extract(acc, [arith.addi(src, arith.minsi(j, last_r))])
            left_ok = arith.cmpi(P.slt, i, mid)
            right_done = arith.cmpi(P.sge, j, hi)
            keep_left = arith.xori(less(to_index(vj), to_index(vi)),
                                   arith.constant(ir.IntegerType.get_signless(1), 1))
            take_l = arith.andi(left_ok, arith.ori(right_done, keep_left))
            v = arith.select(take_l, vi, vj)
            acc = tensor.insert(v, acc, [arith.addi(dst, k)])
            one_l = arith.index_cast(index_t(), arith.extui(i64, take_l))
            return [acc, arith.addi(i, one_l),
                    arith.addi(j, arith.subi(b.index(1), one_l))]
        res = for_nest(b, [hi], [loop.inner_iter_args[0], lo, mid], body, lower=[lo])
        scf.YieldOp([res[0]])
    return loop.results[0]


def sort_indices(b: LoweringContext, buf: ir.Value, half, n,
                 less: Callable[[ir.Value, ir.Value], ir.Value]) -> tuple[ir.Value, ir.Value]:
    """Stable sort of buf[0:n] by ``less``; returns (buf, offset of the sorted half)."""
    half, n = b.as_index(half), b.as_index(n)
    idx = index_t()
    types = [buf.type, idx, idx]
    w = scf.WhileOp(types, [buf, b.index(1), b.index(0)])
    before = w.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        go = arith.cmpi(arith.CmpIPredicate.slt, before.arguments[1], n)
        scf.ConditionOp(go, list(before.arguments))
    after = w.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        cur, width, src = after.arguments
        dst = arith.subi(half, src)
        cur = _merge_round(b, cur, src, dst, n, width, less)
        scf.YieldOp([cur, arith.muli(width, b.index(2)), dst])
    return w.results[0], w.results[2]


def iota_buffer(b: LoweringContext, half) -> ir.Value:
    """A ``2 * half`` i64 sort buffer whose first half is 0, 1, ..., half - 1."""
    i64 = I64()
    size = half * 2 if isinstance(half, int) else arith.muli(half, b.index(2))
    buf = b.empty([size], i64)
    return b.generic([], [buf], [affine_map(1, [0])], ["parallel"],
                     lambda _o: arith.index_cast(i64, loop_index(0)))[0]
