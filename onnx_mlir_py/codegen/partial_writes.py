"""Partial ``vector.transfer_write``s that one-shot bufferization takes for
full overwrites, made visible as partial before it runs.

One-shot bufferization (MLIR 22) decides that a ``vector.transfer_write``
into a static tensor at all-zero constant indices, without a mask, does not
read its destination when each destination dim is at most the vector dim
*zipped with it from the front*. With a vector of lower rank than the
tensor (a row ``vector<16xf32>`` written into row 0 of a ``tensor<2x16xf32>``
plane) or a permuted map, that pairs the wrong dims: the write is taken for
a full overwrite, the rest of the destination is treated as dead, and the
analysis lets two users share one buffer that must not be shared.

Measured (fuzzer case s3101-130, -O3): two MaxPools each used a copy of the
same ``-inf``-filled 2x16 plane, which CSE merged; the second pool writes its
row at ``[0, 0]``, so bufferization gave both pools the one buffer, and the
second read the first pool's input rows as its padding (0.2516 for 0.2376).

:func:`mark_partial_writes` finds every such write whose vector does not
truly cover its destination and replaces its first constant-zero index by
an ``arith.index_cast`` of an ``i64`` zero: the analysis then sees a
non-constant offset and treats the write as partial (a read of the rest),
as it is. Canonicalization after bufferization folds the cast back to the
constant, so the generated code is unchanged.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.ir_util import walk_ops


def _const_zero(v: ir.Value) -> bool:
    owner = v.owner
    if not (isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant"):
        return False
    attr = owner.operation.attributes["value"]
    return isinstance(attr, ir.IntegerAttr) and ir.IntegerAttr(attr).value == 0


def _taken_as_full(dest: ir.RankedTensorType, vec: ir.VectorType) -> bool:
    """What MLIR 22's analysis concludes: the dims zipped from the front."""
    return all(d <= v for d, v in zip(dest.shape, vec.shape))


def _truly_full(dest: ir.RankedTensorType, vec: ir.VectorType, pmap: ir.AffineMap) -> bool:
    """Whether the write covers every element of ``dest`` (indices all 0):
    each dest dim is either reached by a vector dim at least as long, or is 1."""
    covered = {}
    for k, expr in enumerate(pmap.results):
        expr = expr.maybe_downcast()
        if not isinstance(expr, ir.AffineDimExpr):
            return False                    # a broadcast dim (constant 0 result)
        covered[expr.position] = vec.shape[k]
    return all(covered.get(i, 1) >= d for i, d in enumerate(dest.shape))


def mark_partial_writes(module: ir.Module) -> int:
    """Rewrite the writes described in the module docstring; returns how many."""
    n = 0
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        index = ir.IndexType.get()
        for op in walk_ops(module, ("vector.transfer_write",)):
            view = op.opview
            dest = view.base.type
            if not isinstance(dest, ir.RankedTensorType) or not dest.has_static_shape:
                continue
            if view.mask is not None:
                continue
            indices = list(view.indices)
            if not indices or not all(_const_zero(i) for i in indices):
                continue
            vec = ir.VectorType(view.valueToStore.type)
            pmap = ir.AffineMapAttr(view.permutation_map).value
            if not _taken_as_full(dest, vec) or _truly_full(dest, vec, pmap):
                continue
            with ir.InsertionPoint(op), op.location:
                zero = arith.index_cast(index, arith.constant(i64, 0))
            # operands: valueToStore, base, indices..., [mask]
            op.operands[2] = zero
            n += 1
    return n
