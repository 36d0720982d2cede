"""Threads for elementwise ops and row reductions with dynamic outer dims.

Their work is only known at run time (a GELU over [batch * sequence, 3072]
is big for 128 rows and tiny for one), so such an op is emitted once, as an
``scf.forall`` over its dynamic outer dims (see :func:`.elementwise.schedule`)
whose tile sizes are chosen at run time: 1 (one row per iteration, spread
over the thread pool) when its work (the product of its dynamic dims times
the work of one unit of them, :func:`.elementwise.work`) is at least
:data:`.elementwise.THREAD_MIN_WORK`, else the whole dim: one iteration,
which the runtime's parallel-for runs inline on the calling thread. The
tile sizes are ``arith.select`` ops tagged :data:`FORALL_TILE` in front of
the op, both inside an ``scf.execute_region`` (inlined by the next
canonicalization) so that the op's schedule finds them next to it without
walking the function.

(The op used to be cloned under an ``scf.if`` on the work, a threaded copy
and a serial one: every such op was compiled twice, ~2 of the 23 CPU
seconds of the GPT-2 decode step with dynamic batch, sequence and past.)
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, scf, tensor

DYN_THREADS = "onnx_mlir_py.dynamic_threads"
FORALL_TILE = "onnx_mlir_py.forall_tile"


def forall_loops(sizes: list[int | None]) -> list[int]:
    """The loops the forall spreads: the dynamic outer ones when there are
    two or more (batch and sequence; [N, C, H, W] with H and W not one row:
    N and H, as before), else the outer ones dynamic or longer than 1 (the
    channels of an [N, C, H*W] row op: a batch of 1 leaves them). Every loop
    of the forall costs some index arithmetic per row of its body (with N, C
    and H, a 56x56 Add not merged into rows was 18% slower; with N and H
    ~7%, still measurable on rows that short)."""
    dyn = [i for i, s in enumerate(sizes[:-1]) if s is None]
    if len(dyn) > 1:
        return dyn
    return [i for i, s in enumerate(sizes[:-1]) if s is None or s > 1]


def _loop_extents(op: ir.Operation, maps, sizes, loops: list[int]) -> list[ir.Value] | None:
    """Index values of the extents of ``loops`` (a dynamic one read from an
    operand indexing it directly); None when one cannot be read."""
    idx = ir.IndexType.get()
    out = []
    for i in loops:
        if sizes[i] is not None:
            out.append(arith.constant(idx, sizes[i]))
            continue
        found = None
        for v, m in zip(op.operands, maps):
            for pos, e in enumerate(m.results):
                if isinstance(e, ir.AffineDimExpr) and e.position == i \
                        and v.type.is_dynamic_dim(pos):
                    found = (v, pos)
                    break
            if found:
                break
        if found is None:
            return None
        v, pos = found
        out.append(tensor.dim(v, arith.constant(idx, pos)))
    return out


def tile_on_work(op: ir.Operation, maps, sizes, unit_work: int, threshold: int) -> bool:
    """Tag ``op`` DYN_THREADS and put it into an ``scf.execute_region`` after
    one ``arith.select(work >= threshold, 1, extent)`` per loop of
    :func:`forall_loops` (tagged FORALL_TILE, in loop order): the forall's
    tile sizes; the work is ``unit_work`` (the dynamic loops counted once) times
    the extents of the dynamic loops, the row's included.
    False (nothing changed) when it has no dynamic outer dim."""
    if all(s is not None for s in sizes[:-1]):
        return False
    idx = ir.IndexType.get()
    loops = forall_loops(sizes)
    row = [len(sizes) - 1] if sizes[-1] is None else []     # a run-time row length counts too
    with ir.InsertionPoint(op), op.location:
        extents = _loop_extents(op, maps, sizes, loops + row)
        if extents is None:
            return False
        dims = extents[:len(loops)]
        total = arith.constant(idx, max(unit_work, 1))
        for i, d in zip(loops + row, extents):
            if sizes[i] is None:
                total = arith.muli(total, d)
        big = arith.cmpi(arith.CmpIPredicate.uge, total, arith.constant(idx, threshold))
        region = scf.ExecuteRegionOp([r.type for r in op.results])
        block = region.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            one = arith.constant(idx, 1)
            for i, d in zip(loops, dims):
                # an empty dim (a batch of 0) still gets a tile size of 1: the
                # forall's trip count divides by it
                whole = arith.maxui(d, one) if sizes[i] is None else d
                arith.select(big, one, whole).owner.attributes[FORALL_TILE] = ir.UnitAttr.get()
            yield_op = scf.YieldOp(list(op.results)).operation
    for old, new in zip(op.results, region.results):
        old.replace_all_uses_except(new, yield_op)
    op.move_before(yield_op)
    op.attributes[DYN_THREADS] = ir.UnitAttr.get()
    return True
