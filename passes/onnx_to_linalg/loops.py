"""Sequential loop helpers (scf) for lowerings that are inherently ordered:
scatter with duplicate indices, data-dependent output fills, recurrences.

    for_nest(b, bounds, inits, body)   nested scf.for carrying values
    if_then_else(cond, types, t, e)    scf.if with results
    to_i8_if_bool(b, v)                i1 tensor -> i8 (i1 buffers are not
                                       storable by the test harness)
"""
from __future__ import annotations

from typing import Callable, Sequence

import mlir.ir as ir
from mlir.dialects import arith, scf

from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext


def for_nest(b: LoweringContext, bounds: Sequence, inits: Sequence[ir.Value],
             body: Callable[[list, list], Sequence[ir.Value]],
             lower: Sequence | None = None) -> list[ir.Value]:
    """for i0 in [lower0, bounds0), i1 ...: carried = body([i0, i1, ...], carried).
    bounds/lower: int | index Value. Returns the final carried values."""
    inits = list(inits)
    if not bounds:
        return list(body([], inits))
    lower = list(lower) if lower is not None else [0] * len(bounds)

    def level(k: int, carried: list) -> list:
        loop = scf.ForOp(b.as_index(lower[k]), b.as_index(bounds[k]), b.index(1), carried)
        with ir.InsertionPoint(loop.body):
            ivs.append(loop.induction_variable)
            args = list(loop.inner_iter_args)
            if k + 1 == len(bounds):
                new = list(body(list(ivs), args))
            else:
                new = level(k + 1, args)
            ivs.pop()
            scf.YieldOp(new)
        return list(loop.results)

    ivs: list = []
    return level(0, inits)


def if_then_else(cond: ir.Value, types: Sequence[ir.Type],
                 then_fn: Callable[[], Sequence[ir.Value]],
                 else_fn: Callable[[], Sequence[ir.Value]]) -> list[ir.Value]:
    op = scf.IfOp(cond, list(types), has_else=True)
    with ir.InsertionPoint(op.then_block):
        scf.YieldOp(list(then_fn()))
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(list(else_fn()))
    return list(op.results)


def to_i8_if_bool(b: LoweringContext, v: ir.Value) -> ir.Value:
    et = v.type.element_type
    if not (isinstance(et, ir.IntegerType) and et.width == 1):
        return v
    i8 = ir.IntegerType.get_signless(8)
    return b.map_elementwise([v], b.dims(v), i8, lambda x: arith.extui(i8, x))
