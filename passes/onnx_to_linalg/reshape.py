"""Reshape, Flatten, Squeeze, Unsqueeze, Identity.

Reshapes become ``tensor.collapse_shape`` / ``tensor.expand_shape`` when the
new shape groups contiguous dims (static products, or one dynamic dim onto
one dynamic dim), else ``tensor.reshape`` with a shape tensor (dynamic dims
computed from ``tensor.dim``).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.reshape import reshape_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, index_t
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import (IxVal, checks, fit_result, index_of,
                                                        int_elements)
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import norm_axis


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
    """out_dims: int | index Value per result dim. A group with more than one
    dynamic dim becomes a ``tensor.reshape`` (such an ``expand_shape`` aborts
    ``expand-strided-metadata``)."""
    out_t = b.type_of(out_dims, x.type.element_type)
    if any(sum(not isinstance(out_dims[j], int) for j in g) > 1 for g in groups):
        shp = tensor.from_elements(ir.RankedTensorType.get([len(out_dims)], index_t()),
                                   [b.as_index(d) for d in out_dims])
        return tensor.reshape(out_t, x, shp)
    dyn = [d for d in out_dims if not isinstance(d, int)]
    static = [d if isinstance(d, int) else DYN for d in out_dims]
    return tensor.expand_shape(out_t, x, _attr_groups(groups), dyn, static)


def _shape_of(v: ir.Value) -> list:
    t = v.type
    return [None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]


def _is_dim_of(d, x: ir.Value, j: int) -> bool:
    """``d`` is ``tensor.dim(x, j)`` (so provably x's dim j)."""
    if not isinstance(d, ir.Value):
        return False
    o = d.owner
    o = o.operation if isinstance(o, ir.OpView) else o
    if not isinstance(o, ir.Operation) or o.name != "tensor.dim" or o.operands[0] != x:
        return False
    c = o.operands[1].owner
    c = c.operation if isinstance(c, ir.OpView) else c
    return isinstance(c, ir.Operation) and c.name == "arith.constant" and \
        ir.IntegerAttr(c.attributes["value"]).value == j


def _dyn_pairs_proven(x: ir.Value, src: list, dst: list, out_dims: list, groups, collapsing: bool
                      ) -> bool:
    """Each dynamic dim is grouped alone with one dynamic dim of the other
    side (``_groups``); are those pairs provably equal? Yes when each pair is
    ``tensor.dim(x, j)`` itself, or when there is exactly one pair and every
    static dim is non-zero (then the element count, checked, forces it)."""
    pairs = []
    for k, g in enumerate(groups):
        if collapsing:        # group g of src dims -> dst dim k
            if dst[k] is None:
                pairs.append((g[0], k))
        else:                 # src dim k -> group g of dst dims
            if src[k] is None:
                pairs.append((k, next(j for j in g if dst[j] is None)))
    if len(pairs) == 1 and 0 not in src and 0 not in dst:
        return True
    return all(_is_dim_of(out_dims[j], x, i) for i, j in pairs)


def reshape_to(op: OnnxOp, b: LoweringContext, x: ir.Value, out_dims: list,
               proven: bool = True) -> ir.Value:
    """Reshape x to out_dims (int | index Value | IxVal), same element count.

    ``proven``: the caller built out_dims from x's dims keeping their order
    (inserting/removing unit dims), so dynamic result dims are x's dynamic
    dims in order. Otherwise (a computed shape) a dynamic dim is mapped onto
    one of x only when provably equal; if not, ``tensor.reshape``."""
    out_dims = [index_of(d) if isinstance(d, IxVal) else d for d in out_dims]
    src = _shape_of(x)
    dst = [d if isinstance(d, int) else None for d in out_dims]
    et = x.type.element_type
    out_t = b.type_of(out_dims, et)
    if src == dst and (proven or None not in src or
                       _dyn_pairs_proven(x, src, dst, out_dims,
                                         [[k] for k in range(len(src))], True)):
        return x
    if len(dst) <= len(src):
        g = _groups(src, dst)
        if g is not None and (proven or _dyn_pairs_proven(x, src, dst, out_dims, g, True)):
            return collapse(x, g, out_t)
    if len(dst) >= len(src):
        g = _groups(dst, src)
        if g is not None and (proven or _dyn_pairs_proven(x, src, dst, out_dims, g, False)):
            # dynamic result dims map 1:1 onto dynamic source dims
            dims = []
            for k, grp in enumerate(g):
                for j in grp:
                    dims.append(out_dims[j] if isinstance(out_dims[j], int) else b.dim(x, k))
            if not g:  # rank 0 -> all-ones shape
                dims = list(out_dims)
            return expand(b, x, g, dims)
    return reshape_with_shape(b, x, out_dims)


def reshape_with_shape(b: LoweringContext, x: ir.Value, out_dims: list) -> ir.Value:
    """``tensor.reshape`` of x to out_dims (int | index Value) with a shape
    tensor: the general case, and what elementwise fusion does not fold into
    a consumer's iteration space as an expand/collapse_shape would be."""
    out_t = b.type_of(out_dims, x.type.element_type)
    if all(isinstance(d, int) for d in out_dims):
        i64 = ir.IntegerType.get_signless(64)
        shp = arith.constant(ir.RankedTensorType.get([len(out_dims)], i64),
                             ir.DenseElementsAttr.get(np.asarray(out_dims, dtype=np.int64)))
    else:
        shp = tensor.from_elements(ir.RankedTensorType.get([len(out_dims)], index_t()),
                                   [b.as_index(d) for d in out_dims])
    return tensor.reshape(out_t, x, shp)


def _numel(b: LoweringContext, x: ir.Value):
    return dims_product(b, b.dims(x))


def dims_product(b: LoweringContext, dims: list):
    """The product of dims (int | index Value): an int when all are static,
    else an index Value (the dynamic ones multiplied, then the static part)."""
    n = 1
    dyn = None
    for d in dims:
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
    """The shape operand's elements (constants or run-time values) through
    the shape helper ``reshape_dims``; its checks run in the compiled code."""
    x = op.input(0)
    b.ranked(op, x)
    t = b.result_type(op)
    target = int_elements(op, b, op.input(1), t.rank, "shape")
    allowzero = op.version >= 14 and op.attrs.allowzero == 1
    out = reshape_dims(checks(op, b), b.ixdims(x), target, allowzero)
    return [reshape_to(op, b, x, fit_result(op, b, out), proven=False)]


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


def _runtime_axis_flags(op: OnnxOp, b: LoweringContext, axes: ir.Value, rank: int) -> list:
    """One run-time condition per position ``k < rank``: some element of the
    1-D ``axes`` tensor (normalized against ``rank``) is ``k``. Checks the
    axes are in range."""
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxCond
    from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
    i1 = ir.IntegerType.get_signless(1)
    P = arith.CmpIPredicate
    false, true = arith.constant(i1, 0), arith.constant(i1, 1)

    def body(ivs, carried):
        a = arith.index_cast(index_t(), tensor.extract(axes, [ivs[0]]))
        a = arith.select(arith.cmpi(P.slt, a, b.index(0)), arith.addi(a, b.index(rank)), a)
        ok = arith.andi(carried[-1], arith.andi(arith.cmpi(P.sge, a, b.index(0)),
                                                arith.cmpi(P.slt, a, b.index(rank))))
        return [arith.ori(f, arith.cmpi(P.eq, a, b.index(k)))
                for k, f in enumerate(carried[:-1])] + [ok]
    res = for_nest(b, [b.dim(axes, 0)], [false] * rank + [true], body)
    checks(op, b).require(IxCond(res[-1]), f"axes out of range for rank {rank}")
    return [IxCond(f) for f in res[:-1]]


def _unit_groups(flags: list) -> list[list[int]]:
    """Reassociation over the longer side: each flagged (unit) position joins
    the group of the next unflagged one (trailing ones join the last group)."""
    groups, pending = [], []
    for i, f in enumerate(flags):
        pending.append(i)
        if not f:
            groups.append(pending)
            pending = []
    if pending and groups:
        groups[-1] += pending
    return groups


def _squeeze_like(op: OnnxOp, b: LoweringContext):
    """Squeeze/Unsqueeze: result dims from ``squeeze_dims``/``unsqueeze_dims``
    (dialects/onnx/ops/reshape.py) with one flag per squeezed input dim /
    inserted result dim: constant axes give static flags (a collapse/expand
    of unit dims), run-time axes run-time ones (a reshape to computed dims);
    Squeeze without axes squeezes the dims that are 1."""
    from onnx_mlir_py.dialects.onnx.ops.reshape import axis_flags, squeeze_dims, unsqueeze_dims
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np
    x = op.input(0)
    r = b.ranked(op, x).rank
    t = b.result_type(op)
    squeeze = op.op_type == "Squeeze"
    if op.version < 13:
        axes, given = op.attrs.axes, op.attrs.axes is not None
    else:
        given = op.input(1) is not None
        c = const_np(op.input(1)) if given else None
        axes = None if c is None else [int(a) for a in c.reshape(-1)]
    n_flags = r if squeeze else t.rank
    if not given:
        if not squeeze:
            op.fail("axes are required")
        flags = [D.eq(d, 1) for d in b.ixdims(x)]
    elif axes is not None:
        flags = axis_flags([norm_axis(op, a, n_flags) for a in axes], n_flags)
    else:
        b.ranked(op, op.input(1), "axes")
        flags = _runtime_axis_flags(op, b, op.input(1), n_flags)
    ctx = checks(op, b)
    out = (squeeze_dims(ctx, b.ixdims(x), flags, t.rank) if squeeze
           else unsqueeze_dims(ctx, b.ixdims(x), flags))
    out = [index_of(d) for d in out]
    if all(isinstance(f, bool) for f in flags) and t.rank and r:
        g = _unit_groups(flags)
        if squeeze:  # a group holding a dynamic (run-time 1) dim collapses to ?
            ct = b.type_of([DYN if any(x.type.is_dynamic_dim(i) for i in grp) else out[k]
                            for k, grp in enumerate(g)], x.type.element_type)
            return [b.cast_to(collapse(x, g, ct), b.type_of(out, x.type.element_type))]
        return [expand(b, x, g, out)]
    return [reshape_to(op, b, x, out, proven=False)]


for _v in (13, 21, 23, 24, 25):
    lowering("Squeeze", _v)(_squeeze_like)
    lowering("Unsqueeze", _v)(_squeeze_like)
lowering("Squeeze", 1, 11)(_squeeze_like)
lowering("Unsqueeze", 1, 11)(_squeeze_like)


@lowering("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def lower_identity(op: OnnxOp, b: LoweringContext):
    return [op.input(0)]
