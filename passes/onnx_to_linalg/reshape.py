"""Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Identity.

Reshapes become ``tensor.collapse_shape`` / ``tensor.expand_shape`` when the
new shape groups contiguous dims (static products, or one dynamic dim onto
one dynamic dim), else ``tensor.reshape`` with a shape tensor (dynamic dims
computed from ``tensor.dim``).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, linalg, tensor

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import DYN, LoweringContext, index_t, val


def _groups(src: list, dst: list) -> list[list[int]] | None:
    """Reassociation collapsing ``src`` dims (int | None) into ``dst``."""
    if not dst:
        return [] if all(d == 1 for d in src) else None
    groups, i = [], 0
    for d in dst:
        g = []
        if d is None:
            if i >= len(src) or src[i] is not None:
                return None
            g.append(i)
            i += 1
        else:
            prod = 1
            while i < len(src) and src[i] is not None and (prod < d or not g):
                prod *= src[i]
                g.append(i)
                i += 1
                if prod == d:
                    break
            if prod != d or not g:
                return None
        groups.append(g)
    while i < len(src) and src[i] == 1:  # trailing unit dims join the last group
        groups[-1].append(i)
        i += 1
    return groups if i == len(src) else None


def _attr_groups(groups):
    return ir.ArrayAttr.get([ir.ArrayAttr.get(
        [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), j) for j in g]) for g in groups])


def collapse(x: ir.Value, groups: list[list[int]], out_t: ir.Type) -> ir.Value:
    return tensor.collapse_shape(out_t, x, _attr_groups(groups))


def expand(b: LoweringContext, x: ir.Value, groups: list[list[int]], out_dims: list
           ) -> ir.Value:
    """out_dims: int | index Value per result dim."""
    out_t = b.type_of(out_dims, x.type.element_type)
    dyn = [d for d in out_dims if not isinstance(d, int)]
    static = [d if isinstance(d, int) else DYN for d in out_dims]
    return tensor.expand_shape(out_t, x, _attr_groups(groups), dyn, static)


def _shape_of(v: ir.Value) -> list:
    t = v.type
    return [None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]


def reshape_to(op: OnnxOp, b: LoweringContext, x: ir.Value, out_dims: list) -> ir.Value:
    """Reshape x to out_dims (int | index Value)."""
    src = _shape_of(x)
    dst = [d if isinstance(d, int) else None for d in out_dims]
    et = x.type.element_type
    out_t = b.type_of(out_dims, et)
    if src == dst:
        return x
    if len(dst) <= len(src):
        g = _groups(src, dst)
        if g is not None:
            return collapse(x, g, out_t)
    if len(dst) >= len(src):
        g = _groups(dst, src)
        if g is not None:
            # dynamic result dims map 1:1 onto dynamic source dims
            dims = []
            for k, grp in enumerate(g):
                for j in grp:
                    dims.append(out_dims[j] if isinstance(out_dims[j], int) else b.dim(x, k))
            if not g:  # rank 0 -> all-ones shape
                dims = list(out_dims)
            return expand(b, x, g, dims)
    # general case: tensor.reshape with a shape tensor
    if all(isinstance(d, int) for d in out_dims):
        i64 = ir.IntegerType.get_signless(64)
        shp = arith.constant(ir.RankedTensorType.get([len(out_dims)], i64),
                             ir.DenseElementsAttr.get(np.asarray(out_dims, dtype=np.int64)))
    else:
        shp = tensor.from_elements(ir.RankedTensorType.get([len(out_dims)], index_t()),
                                   [b.as_index(d) for d in out_dims])
    return tensor.reshape(out_t, x, shp)


def _numel(b: LoweringContext, x: ir.Value):
    n = 1
    dyn = None
    for d in b.dims(x):
        if isinstance(d, int):
            n *= d
        else:
            dyn = d if dyn is None else arith.muli(dyn, d)
    if dyn is None:
        return n
    return arith.muli(dyn, b.index(n)) if n != 1 else dyn


def _result_dims_by_numel(op: OnnxOp, b: LoweringContext, x: ir.Value, idx: int = 0) -> list:
    """Result dims; one dynamic dim is numel(x) / product(static dims)."""
    t = b.result_type(op, idx)
    dyn = [k for k in range(t.rank) if t.is_dynamic_dim(k)]
    if len(dyn) > 1:
        op.fail(f"reshape to {t} with more than one dynamic dim is not supported")
    if not dyn:
        return list(t.shape)
    rest = int(np.prod([t.shape[k] for k in range(t.rank) if k != dyn[0]] or [1]))
    n = _numel(b, x)
    d = b.index(n // rest) if isinstance(n, int) else \
        (arith.divui(n, b.index(rest)) if rest != 1 else n)
    return [d if k == dyn[0] else int(t.shape[k]) for k in range(t.rank)]


@lowering("Reshape", 5, 13, 14, 19, 21, 23, 24, 25)
def lower_reshape(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    # the shape input is only read through the result type (shape inference
    # folded constant shapes into it); a dynamic shape tensor is unsupported
    t = b.result_type(op)
    if sum(t.is_dynamic_dim(k) for k in range(t.rank)) > 1:
        op.fail("reshape with a non-constant shape is not supported")
    return [reshape_to(op, b, x, _result_dims_by_numel(op, b, x))]


@lowering("Flatten", 1, 9, 11, 13, 21, 23, 24, 25)
def lower_flatten(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    axis = op.attrs.axis
    axis = axis + r if axis < 0 else axis
    if axis == 0 or axis == r:
        return [reshape_to(op, b, x, _result_dims_by_numel(op, b, x))]
    src = _shape_of(x)
    groups = [list(range(axis)), list(range(axis, r))]

    def prod(g):
        return None if any(src[i] is None for i in g) else int(np.prod([src[i] for i in g]))
    out_t = ir.RankedTensorType.get([DYN if prod(g) is None else prod(g) for g in groups],
                                    x.type.element_type)
    return [collapse(x, groups, out_t)]


def _squeeze_like(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    t = b.result_type(op)
    # result dims: map dynamic result dims onto dynamic input dims in order
    dyn_src = [k for k in range(x.type.rank) if x.type.is_dynamic_dim(k)]
    dims, it = [], iter(dyn_src)
    for k in range(t.rank):
        if t.is_dynamic_dim(k):
            j = next(it, None)
            if j is None:
                op.fail("cannot match dynamic result dims to input dims")
            dims.append(b.dim(x, j))
        else:
            dims.append(int(t.shape[k]))
    return [reshape_to(op, b, x, dims)]


for _v in (13, 21, 23, 24, 25):
    lowering("Squeeze", _v)(_squeeze_like)
    lowering("Unsqueeze", _v)(_squeeze_like)
lowering("Squeeze", 1, 11)(_squeeze_like)
lowering("Unsqueeze", 1, 11)(_squeeze_like)


@lowering("Transpose", 1, 13, 21, 23, 24, 25)
def lower_transpose(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    perm = op.attrs.perm or list(range(r))[::-1]
    dims = b.dims(x)
    init = b.empty([dims[p] for p in perm], x.type.element_type)
    return [val(linalg.transpose(x, outs=[init], permutation=list(perm)))]


@lowering("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def lower_identity(op: OnnxOp, b: LoweringContext):
    return [op.input(0)]
