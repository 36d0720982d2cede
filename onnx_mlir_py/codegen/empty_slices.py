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
  destination;
- ``tensor.collapse_shape`` / ``tensor.expand_shape`` of such a tensor
  becomes a ``tensor.empty`` of the result type: a collapse of [0, ?, 0] into
  [?, 0] that a ``tensor.cast`` made [0, 0] was folded by memref
  canonicalization into a static 0 from a dynamic group, which the
  verifier rejects (fuzzer case s2000-1582: Slice to an empty tensor, then
  Flatten).
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
        for op in walk_ops(module, ("tensor.extract_slice", "tensor.insert_slice",
                                    "tensor.collapse_shape", "tensor.expand_shape")):
            view = op.opview
            if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
                if not _has_zero_dim(op.operands[0]):
                    continue
                with ir.InsertionPoint(op), op.location:
                    empty = tensor.empty(_reshaped_dims(view), op.results[0].type.element_type)
                op.results[0].replace_all_uses_with(empty)
            elif op.name == "tensor.extract_slice":
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


def _reshaped_dims(view) -> list:
    """The result dims of a collapse_shape / expand_shape, static ones as ints
    (a collapsed dynamic dim: the product of its group's source dims)."""
    t = view.result.type
    if view.operation.name == "tensor.expand_shape":
        dyn = iter(view.output_shape)
        return [next(dyn) if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]
    from mlir.dialects import arith
    src = view.src
    dims = []
    for i, group in enumerate(view.reassociation):
        if not t.is_dynamic_dim(i):
            dims.append(t.shape[i])
            continue
        size = None
        for j in (ir.IntegerAttr(a).value for a in group):
            d = tensor.dim(src, arith.constant(ir.IndexType.get(), j))
            size = d if size is None else arith.muli(size, d)
        dims.append(size)
    return dims
