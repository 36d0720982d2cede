"""Range checks of index VALUES read from data (Gather, GatherElements,
GatherND, Scatter*, RNN ``sequence_lens``): a value past its axis must make
the call fail naming the node, never read or write out of bounds.

A check cannot sit inside the kernel (a parallel loop has no entry frame to
return to), so one sequential loop before the kernel reduces the indices to
one unsigned maximum (per index component for GatherND / ScatterND), which
one comparison checks (``LoweringContext.require``).
Constant indices are checked at compile time (no run-time code).

    require_indices(op, b, ind, dim, "data axis 1")       # -dim <= i < dim
    require_index_components(op, b, ind, [d0, d1])        # indices[..., j] vs dj
    require_indices(op, b, lens, S, "...", negative=False, inclusive=True)  # 0..S
"""
from __future__ import annotations

from typing import Sequence

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal, checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _as_i64(v) -> ir.Value:
    """int, IxVal or index Value -> i64 Value."""
    if D.is_static(v):
        return arith.constant(_i64(), int(v))
    v = v.value if isinstance(v, IxVal) else v
    return arith.index_cast(_i64(), v) if isinstance(v.type, ir.IndexType) else v


class _Range:
    """Allowed values ``[lo, hi]`` of one index component, for messages."""

    def __init__(self, dim, negative: bool, inclusive: bool, what: str, where: str):
        self.dim = wrap(dim)
        self.lo = -self.dim if negative else 0
        self.hi = self.dim if inclusive else self.dim - 1
        self.message = (f"{what} {{0}} is out of range [{{2}}, {{3}}] for {where} "
                        f"(size {{1}})")


def _check_constant(op, b: LoweringContext, c: np.ndarray, ranges: list[_Range],
                    per_comp: bool) -> None:
    """Constant indices: a compile-time error naming the node (two scalar
    comparisons at run time when the dim is dynamic)."""
    if c.size == 0:
        return
    c = c.astype(np.int64)
    cols = [c.reshape(-1, len(ranges))[:, j] for j in range(len(ranges))] if per_comp \
        else [c.reshape(-1)]
    for col, rg in zip(cols, ranges):
        mn, mx = int(col.min()), int(col.max())
        lo_ok = D.ge(mn, rg.lo)
        checks(op, b).require(D.both(lo_ok, D.le(mx, rg.hi)), rg.message,
                              D.select(lo_ok, mx, mn), rg.dim, rg.lo, rg.hi)


def _check_runtime(op, b: LoweringContext, ind: ir.Value, ranges: list[_Range],
                   per_comp: bool) -> None:
    """One pass over ``ind`` computing per component the largest ``v - lo``
    as an unsigned number: below ``hi - lo + 1`` iff every value is in
    ``[lo, hi]``, else ``max + lo`` is an offending value. The maxima are
    carried by an ``scf.for`` (in registers; a linalg.generic reduction
    bufferizes to a 0-d buffer written at every element, which cost 1.6x a
    Gather of one float per index)."""
    if not b.runtime_checks:
        return
    i64 = _i64()
    bounds = b.dims(ind)[:-1] if per_comp else b.dims(ind)
    n = D.product([wrap(d) for d in bounds])
    empty = D.eq(n, 0)
    if empty is True:
        return
    los = [_as_i64(rg.lo) for rg in ranges]

    def body(ivs, carried):
        out = []
        for j, (u, lo) in enumerate(zip(carried, los)):
            v = tensor.extract(ind, list(ivs) + ([b.index(j)] if per_comp else []))
            if v.type != i64:
                v = arith.extsi(i64, v)
            out.append(arith.maxui(u, arith.subi(v, lo)))
        return out
    maxima = for_nest(b, bounds, [arith.constant(i64, 0)] * len(ranges), body)
    for rg, u, lo in zip(ranges, maxima, los):
        hi = _as_i64(rg.hi)
        width = arith.addi(arith.subi(hi, lo), arith.constant(i64, 1))
        ok = arith.cmpi(arith.CmpIPredicate.ult, u, width)
        if empty is not False:
            ok = arith.ori(ok, empty.value)
        b.require(ok, f"node '{op.name}' ({op.op_type}): {rg.message}",
                  arith.addi(u, lo), _as_i64(rg.dim), lo, hi)


def _check(op, b: LoweringContext, ind: ir.Value, ranges: list[_Range], per_comp: bool):
    c = const_np(ind)
    if c is not None:
        _check_constant(op, b, c, ranges, per_comp)
    else:
        _check_runtime(op, b, ind, ranges, per_comp)


def require_indices(op, b: LoweringContext, ind: ir.Value, dim, where: str, *,
                    what: str = "index", negative: bool = True,
                    inclusive: bool = False) -> None:
    """Every element of ``ind`` within ``[-dim, dim - 1]`` (``[0, ...]``
    without ``negative``, ``[..., dim]`` with ``inclusive``). ``dim``: int or
    index Value; the message says "<what> 7 is out of range [-4, 3] for
    <where> (size 4)"."""
    _check(op, b, ind, [_Range(dim, negative, inclusive, what, where)], False)


def require_index_components(op, b: LoweringContext, ind: ir.Value, dims: Sequence,
                             first_axis: int = 0) -> None:
    """GatherND/ScatterND: ``indices[..., j]`` indexes data dim
    ``first_axis + j`` (of size ``dims[j]``)."""
    if dims:
        _check(op, b, ind, [_Range(d, True, False, f"index (indices[..., {j}])",
                                   f"data axis {first_axis + j}")
                            for j, d in enumerate(dims)], True)
