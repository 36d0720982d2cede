"""Slices of tensors with a static size-0 dim, folded away before bufferization.

A slice of a tensor that has a static dim of size 0 moves no element. Such
slices appear when canonicalization folds a run-time dim to 0 after lowering
(a dynamic ``[n]`` input sliced to an empty tensor and then broadcast against
it: fuzzer case s2000-413). Their static offset 0 into the size-0 dim, with a
size only known at run time, is rejected by ``memref.subview``'s verifier once
bufferized ("offset 0 is out-of-bounds: 0 >= 0"). So:

- ``tensor.extract_slice`` of such a tensor becomes a ``tensor.empty`` of the
  same type (its dynamic dims are the slice's dynamic sizes);
- ``tensor.insert_slice`` into such a tensor, or of such a tensor, is its
  destination.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import tensor

from onnx_mlir_py.ir_util import walk_ops


def _has_zero_dim(v: ir.Value) -> bool:
    """``v``'s type, or that of a ``tensor.cast`` source it comes from (the
    cast disappears in bufferization), has a static size-0 dim."""
    while True:
        t = v.type
        if isinstance(t, ir.RankedTensorType) and any(
                not t.is_dynamic_dim(i) and t.shape[i] == 0 for i in range(t.rank)):
            return True
        owner = v.owner
        if not (isinstance(owner, ir.OpView) and owner.operation.name == "tensor.cast"):
            return False
        v = owner.operands[0]


def fold_empty_slices(module: ir.Module) -> int:
    """Rewrite the slices described in the module docstring; returns how many."""
    n = 0
    with module.context:
        for op in walk_ops(module, ("tensor.extract_slice", "tensor.insert_slice")):
            view = op.opview
            if op.name == "tensor.extract_slice":
                if not _has_zero_dim(op.operands[0]):
                    continue
                t = op.results[0].type
                # the result's dynamic dims are the dynamic size operands, in
                # order (a rank-reducing slice drops only static unit dims)
                sizes = iter(view.sizes)
                mixed = [next(sizes) if t.is_dynamic_dim(i) else t.shape[i]
                         for i in range(t.rank)]
                with ir.InsertionPoint(op), op.location:
                    empty = tensor.empty(mixed, t.element_type)
                op.results[0].replace_all_uses_with(empty)
            else:
                dest = op.operands[1]
                if not (_has_zero_dim(dest) or _has_zero_dim(op.operands[0])):
                    continue
                op.results[0].replace_all_uses_with(dest)
            op.erase()
            n += 1
    return n
