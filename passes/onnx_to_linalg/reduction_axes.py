"""Reduce* whose ``axes`` input is known only at run time.

The axes become a bit mask of reduced dims (an scf.for over the axes when
their count is dynamic; range and duplicates are checked at run time,
naming the node; empty axes: every dim, or none with noop_with_empty_axes). Then each dim k in turn is reduced (keepdims) under an
scf.if on its bit: the combining functions are associative, so reducing
one dim at a time is the reduction over the set (LogSumExp: the
max-shifted single-dim reduction, itself associative). keepdims=0 needs
the result rank (the number of axes, or the result type): the kept dims
are picked at run time and the result is a tensor.reshape.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, scf, tensor

from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg import dims_ir
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to

I = arith.CmpIPredicate


def _i64(b, v):
    return b.const(v, ir.IntegerType.get_signless(64))


def axes_mask(op: OnnxOp, b: LoweringContext, v, r: int):
    """i64 bit mask of the reduced dims."""
    i64 = ir.IntegerType.get_signless(64)
    i1 = ir.IntegerType.get_signless(1)
    if r > 62:
        op.fail(f"run-time axes on a rank-{r} input (at most 62) are not supported")
    t = b.ranked(op, v, "axes")
    if t.rank != 1:
        op.fail(f"'axes' must be 1-D, got rank {t.rank}")
    n = b.as_index(b.dim(v, 0))

    def step(mask, bad, dup, j):
        a = tensor.extract(v, [j])
        a = a if a.type == i64 else arith.extsi(i64, a)
        na = arith.select(arith.cmpi(I.slt, a, _i64(b, 0)), arith.addi(a, _i64(b, r)), a)
        out = arith.ori(arith.cmpi(I.slt, na, _i64(b, 0)), arith.cmpi(I.sge, na, _i64(b, r)))
        bit = arith.shli(_i64(b, 1), arith.select(out, _i64(b, 0), na))
        seen = arith.cmpi(I.ne, arith.andi(mask, bit), _i64(b, 0))
        return arith.ori(mask, bit), arith.ori(bad, out), arith.ori(dup, seen)

    init = [_i64(b, 0), b.const(0, i1), b.const(0, i1)]
    if not t.is_dynamic_dim(0):
        vals = init
        for j in range(t.shape[0]):
            vals = step(*vals, b.index(j))
    else:
        loop = scf.ForOp(b.index(0), n, b.index(1), init)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(list(step(*loop.inner_iter_args, loop.induction_variable)))
        vals = list(loop.results)
    mask, bad, dup = vals
    one = b.const(1, i1)
    b.require(arith.xori(bad, one), f"node '{op.name}' ({op.op_type}): an axis is out of "
              f"range [{-r}, {r - 1}]")
    b.require(arith.xori(dup, one), f"node '{op.name}' ({op.op_type}): axes has duplicates")
    empty = arith.cmpi(I.eq, n, b.index(0))
    if op.attrs.noop_with_empty_axes:
        # no dim reduced: only the elementwise steps apply (as reduction.py's
        # noop for axes known to be empty)
        return mask
    return arith.select(empty, _i64(b, (1 << r) - 1), mask)


def _flag(b, mask, k):
    bit = arith.andi(arith.shrui(mask, _i64(b, k)), _i64(b, 1))
    return arith.cmpi(I.ne, bit, _i64(b, 0))


def reduce_masked(op: OnnxOp, b: LoweringContext, x, mask, one_dim) -> ir.Value:
    """Reduce (keepdims) every dim whose mask bit is set; ``one_dim(y, k)``
    reduces dim k of y (result without dim k)."""
    r = x.type.rank
    et = x.type.element_type
    y = x
    for k in range(r):
        dims = b.dims(y)
        st = [d if isinstance(d, int) and d == 1 else None for d in dims]
        yt = b.type_of([1 if s == 1 else "?" for s in st], et)
        if_op = scf.IfOp(_flag(b, mask, k), [yt], has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            z = one_dim(y, k)
            z = reshape_to(op, b, z, [1 if j == k else dims[j] for j in range(r)])
            scf.YieldOp([b.cast_to(z, yt)])
        with ir.InsertionPoint(if_op.else_block):
            scf.YieldOp([b.cast_to(y, yt)])
        y = if_op.results[0]
    return y


def count(b: LoweringContext, x, mask) -> ir.Value:
    """Number of reduced elements (index Value)."""
    n = b.index(1)
    for k in range(x.type.rank):
        n = arith.muli(n, arith.select(_flag(b, mask, k), b.as_index(b.dim(x, k)), b.index(1)))
    return n


def drop_reduced(op: OnnxOp, b: LoweringContext, y, mask) -> ir.Value:
    """keepdims=0: y (rank r, reduced dims 1) without the reduced dims."""
    r = y.type.rank
    t = b.result_type(op)
    m = r - t.rank
    if m < 0:
        op.fail(f"result rank {t.rank} is larger than the input rank {r}")
    nbits = arith.index_cast(ir.IndexType.get(), math.ctpop(mask))
    chk = dims_ir.checks(op, b)
    chk.require(D.eq(dims_ir.IxVal(nbits), m), f"reduces {{0}} dims, the result rank "
                f"{t.rank} needs {m}", dims_ir.IxVal(nbits))
    dims = [b.as_index(b.dim(y, k)) for k in range(r)]
    kept = [arith.xori(_flag(b, mask, k), b.const(1, ir.IntegerType.get_signless(1)))
            for k in range(r)]
    out = []
    for j in range(r - m):
        d, before = b.index(0), b.index(0)  # before: kept dims left of k
        for k in range(r):
            hit = arith.andi(kept[k], arith.cmpi(I.eq, before, b.index(j)))
            d = arith.select(hit, dims[k], d)
            before = arith.addi(before, arith.select(kept[k], b.index(1), b.index(0)))
        out.append(d)
    out = dims_ir.fit_result(op, b, [dims_ir.IxVal(d) for d in out])
    return reshape_to(op, b, y, out, proven=False)
