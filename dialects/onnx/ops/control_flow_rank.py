"""If results whose two branches yield different ranks (a scalar in one, a
[1] in the other: the AffineGrid function body's ``step_d``), ranked where
no use can tell the ranks apart.

Such a result's rank is known only at run time, which the compiler cannot
lower. It gets the higher rank when (a) the branches' shapes differ only by
leading dims that are statically 1 in the higher-rank one, and (b) every use
is rank-insensitive: the type operand of CastLike, or an operand of a
numpy-broadcasting elementwise op another operand of which has at least that
rank (the leading unit dims then broadcast away: the use's result shape and
values are the same whichever branch ran). The lowering prepends the unit
dims to the lower-rank branch's value (``lower_if``). Anything else keeps the
unranked result, refused at lowering naming the node.

``rank_if_results`` runs after shape inference has typed the uses' other
operands; shape inference then runs again over the function (passes/
shape_inference.py) to type what follows.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.dialects.onnx.ops.control_flow import _branches, merge
from onnx_mlir_py.dialects.onnx.ops.elementwise import BINARY, COMPARE
from onnx_mlir_py.ir_util import as_operation, walk_ops

# PRelu broadcasts its slope to X only (unidirectional): left out
_BROADCASTING = (set(BINARY) - {"PRelu"}) | set(COMPARE) | {"Where"}


def unit_prefix_type(a: ir.Type, b: ir.Type) -> ir.Type | None:
    """The higher-rank type of ranked ``a`` and ``b`` when their ranks differ
    only by leading dims that are static 1s there (merged with the other,
    unit dims prepended), else None."""
    if not (isinstance(a, ir.RankedTensorType) and isinstance(b, ir.RankedTensorType)) or \
            a.rank == b.rank or str(a.element_type) != str(b.element_type):
        return None
    lo, hi = (a, b) if a.rank < b.rank else (b, a)
    k = hi.rank - lo.rank
    if any(hi.is_dynamic_dim(i) or hi.shape[i] != 1 for i in range(k)):
        return None
    padded = ir.RankedTensorType.get([1] * k + list(lo.shape), lo.element_type)
    m = merge(padded, hi)
    return m if isinstance(m, ir.RankedTensorType) and m.rank == hi.rank else None


def _rank_insensitive(owner: ir.Operation, k: int, rank: int) -> bool:
    """Operand ``k`` of ``owner`` may have a rank below ``rank`` by leading
    unit dims without changing ``owner``'s result."""
    if not is_onnx_op(owner):
        return False
    t = OnnxOp(owner).op_type
    if t == "CastLike":
        return k == 1
    if t not in _BROADCASTING:
        return False
    return any(j != k and isinstance(v.type, ir.RankedTensorType) and v.type.rank >= rank
               for j, v in enumerate(owner.operands))


def rank_if_results(root) -> bool:
    """Give such If results (in ``root``, at any depth) their higher rank;
    True if any changed."""
    changed = False
    for op in walk_ops(root, lambda o: o.name.startswith("onnx.if")):
        then, other = _branches(OnnxOp(op))
        for i, r in enumerate(op.results):
            if isinstance(r.type, ir.RankedTensorType) or i >= min(len(then), len(other)):
                continue
            t = unit_prefix_type(then[i].type, other[i].type)
            if t is not None and all(_rank_insensitive(as_operation(u.owner), u.operand_number,
                                                       t.rank) for u in r.uses):
                r.set_type(t)
                changed = True
    return changed
