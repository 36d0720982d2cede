"""Threads for elementwise ops and row reductions with dynamic outer dims.

Their work is only known at run time (a GELU over [batch * sequence, 3072]
is big for 128 rows and tiny for one), so such an op is cloned under an
``scf.if`` on its run-time work (the product of its dynamic dims times the
work of one unit of them, :func:`.elementwise.work`) against
:data:`.elementwise.THREAD_MIN_WORK`: the ``then`` copy is tagged
:data:`DYN_THREADS` and distributed over its dynamic (and large static)
outer dims by an ``scf.forall`` with run-time bounds (see
:func:`.elementwise.schedule`), the ``else`` copy runs on the calling
thread. Both write the same init tensor, so bufferization keeps them in
place.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, scf, tensor

DYN_THREADS = "onnx_mlir_py.dynamic_threads"


def _dyn_outer_dims(op: ir.Operation, maps, sizes) -> list[ir.Value] | None:
    """Index values of the op's dynamic outer loops (read from an operand
    indexing each directly); None when one cannot be read."""
    out = []
    for i, s in enumerate(sizes[:-1]):
        if s is not None:
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
        out.append(tensor.dim(v, arith.constant(ir.IndexType.get(), pos)))
    return out


def split_on_work(op: ir.Operation, maps, sizes, unit_work: int, threshold: int) -> bool:
    """Replace ``op`` by ``scf.if (work >= threshold) {op tagged DYN_THREADS}
    else {op}``; False (nothing changed) when it has no dynamic outer dim."""
    if all(s is not None for s in sizes[:-1]):
        return False
    idx = ir.IndexType.get()
    with ir.InsertionPoint(op), op.location:
        dims = _dyn_outer_dims(op, maps, sizes)
        if dims is None:
            return False
        total = arith.constant(idx, max(unit_work, 1))
        for d in dims:
            total = arith.muli(total, d)
        big = arith.cmpi(arith.CmpIPredicate.uge, total, arith.constant(idx, threshold))
        if_op = scf.IfOp(big, [r.type for r in op.results], has_else=True)
        with ir.InsertionPoint(if_op.then_block):
            threaded = op.clone()
            threaded.attributes[DYN_THREADS] = ir.UnitAttr.get()
            scf.YieldOp(list(threaded.results))
        with ir.InsertionPoint(if_op.else_block):
            single = op.clone()
            scf.YieldOp(list(single.results))
    for old, new in zip(op.results, if_op.results):
        old.replace_all_uses_with(new)
    op.erase()
    return True
