"""Merge the trailing run-time dims of an elementwise generic into one row.

The vectorize step (:mod:`.elementwise`) vectorizes the innermost loop
only: over [N, C, H, W] with run-time H and W, a SiLU or a
squeeze-excitation multiply on a 7x7 map ran 7 rows of 7 elements, each a
peeled loop whose masked remainder is a whole chunk of 4 vectors (3 of
them empty). When every operand reads the trailing dynamic loops as its own
trailing dims, in order (or does not read them at all: the [N, C, 1, 1]
gate of a squeeze-excitation), those loops are one contiguous row of H*W
elements: the operands are ``tensor.collapse_shape``d to [N, C, H*W], the
generic runs over the row, and its result is reshaped back to the original
shape. The reshape is a ``tensor.reshape`` (an ``expand_shape`` with two
run-time sizes in one group aborts ``expand-strided-metadata``, see
``onnx_to_linalg/reshape.py``); both are views after bufferization.

Only ops with a run-time dim are rewritten (the static libraries stay as
they were). A dynamic row takes in the dynamic loops in front of it, a static
row shorter than SHORT_ROW any loop (a 7x7 map of a dynamic batch: rows of 49
instead of 7), while it stays within LONG_ROW elements; a static dim in front
of a dynamic row or of a long one (the channels) stays a loop of its own,
which the threads can distribute.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import arith, tensor

DYN = ir.ShapedType.get_dynamic_size()
# A static row shorter than this (4 AVX-512 vectors) takes the loop in front
# of it in (a 7x7 map of a dynamic batch: rows of 49), up to LONG_ROW
# elements (vectorized whole, see elementwise.WHOLE_ROW_MAX).
SHORT_ROW = 64
LONG_ROW = 256


def _dim_pos(m: ir.AffineMap, d: int) -> int | None:
    for pos, e in enumerate(m.results):
        if isinstance(e, ir.AffineDimExpr) and e.position == d:
            return pos
    return None


def _zero_tail(m: ir.AffineMap, k: int) -> bool:
    """The map's last ``k`` results are the constant 0 (a broadcast over
    them: the [N, C, 1, 1] gate of a squeeze-excitation)."""
    res = list(m.results)
    return len(res) >= k and all(isinstance(e, ir.AffineConstantExpr) and e.value == 0
                                 for e in res[len(res) - k:])


def _mergeable(maps: list[ir.AffineMap], first: int, n: int) -> bool:
    """Loops first..n-1 are read by every map as its last results, in order,
    or not at all: then its last results are all 0 (collapsed with them) or
    none is a constant (the vectorizer takes no operand of another rank with
    constant results)."""
    k = n - first
    for m in maps:
        pos = [_dim_pos(m, d) for d in range(first, n)]
        if all(p is None for p in pos):
            if _zero_tail(m, k) or \
                    not any(isinstance(e, ir.AffineConstantExpr) for e in m.results):
                continue
            return False
        start = len(m.results) - k
        if pos != list(range(start, len(m.results))):
            return False
    return True


def _contiguous(v: ir.Value) -> bool:
    """Is ``v``'s buffer provably contiguous? Not a ``tensor.extract_slice``
    (the slice an Add's run-time broadcast check takes of its operands, at
    offset 0 with the result's sizes): its view has run-time strides, so the
    collapse would copy it (inside the forall's body: per iteration, a 56x56
    residual Add 35 -> 410 us)."""
    op = v.owner
    op = op.operation if isinstance(op, ir.OpView) else op
    if not isinstance(op, ir.Operation):
        return True                              # a block argument: a function's input
    if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
        return _contiguous(op.operands[0])
    return op.name != "tensor.extract_slice"


def _joins(row: int | None, dim: int | None) -> bool:
    """Does loop extent ``dim`` join the row of extent ``row`` (None:
    dynamic) in front of it? A dynamic one a dynamic row; anything a static
    row shorter than SHORT_ROW, as long as the row stays within LONG_ROW."""
    if row is None:
        return dim is None
    return row < SHORT_ROW and (dim is None or row * dim <= LONG_ROW)


def row_start(op: ir.Operation, maps: list[ir.AffineMap], sizes: list[int | None]) -> int | None:
    """First loop of the trailing loops that are merged into one row (see
    :func:`_joins`; never the outermost loop), in an op with a dynamic loop;
    None when fewer than two are."""
    n = len(sizes)
    if op.name != "linalg.generic" or n < 2 or None not in sizes or \
            any("parallel" not in str(a) for a in op.attributes["iterator_types"]):
        return None
    if not all(_contiguous(v) for v, m in zip(op.operands, maps)
               if _dim_pos(m, n - 1) is not None or _zero_tail(m, 2)):
        return None
    first, row = n - 1, sizes[-1]
    # the outermost loop stays one (the threads distribute it)
    while first > 1 and _joins(row, sizes[first - 1]) and _mergeable(maps, first - 1, n):
        first -= 1
        row = None if row is None or sizes[first] is None else row * sizes[first]
    return first if first < n - 1 else None


def collapsed(v: ir.Value, keep: int) -> ir.Value:
    """``v`` with its dims from ``keep`` on collapsed into one."""
    t = v.type
    shape = list(t.shape)
    tail = shape[keep:]
    row = DYN if DYN in tail else math.prod(tail)
    i64 = ir.IntegerType.get_signless(64)
    groups = [[j] for j in range(keep)] + [list(range(keep, t.rank))]
    attr = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, j) for j in g])
                             for g in groups])
    return tensor.collapse_shape(ir.RankedTensorType.get(shape[:keep] + [row], t.element_type),
                                 v, attr)


def reshaped_like(v: ir.Value, like: ir.Value) -> ir.Value:
    """``v`` reshaped to the type and (run-time) shape of ``like``."""
    t = like.type
    idx = ir.IndexType.get()
    dims = [tensor.dim(like, arith.constant(idx, i)) if t.is_dynamic_dim(i)
            else arith.constant(idx, t.shape[i]) for i in range(t.rank)]
    shape = tensor.from_elements(ir.RankedTensorType.get([t.rank], idx), dims)
    return tensor.reshape(t, v, shape)


def collapse_row(op: ir.Operation, maps: list[ir.AffineMap], sizes: list[int | None]
                 ) -> ir.Operation | None:
    """Replace ``op`` by a generic whose trailing dynamic loops are one row
    (see the module docstring); returns the new generic, or None (``op``
    unchanged) when fewer than two loops can be merged."""
    first = row_start(op, maps, sizes)
    if first is None:
        return None
    n = len(sizes)
    operands, new_maps = [], []
    with ir.InsertionPoint(op), op.location:
        for v, m in zip(op.operands, maps):
            res = list(m.results)
            keep = len(res) - (n - first)
            if _dim_pos(m, n - 1) is not None:
                operands.append(collapsed(v, keep))
                res = res[:keep] + [ir.AffineDimExpr.get(first)]
            elif _zero_tail(m, n - first):
                operands.append(collapsed(v, keep))
                res = res[:keep + 1]
            else:
                operands.append(v)
            new_maps.append(ir.AffineMap.get(first + 1, 0, res))
        attrs = {name: op.attributes[name] for name in op.attributes}
        attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
        attrs["iterator_types"] = ir.ArrayAttr.get(list(op.attributes["iterator_types"])[:first + 1])
        n_in = len(op.operands) - len(op.results)
        inits = operands[n_in:]
        new = ir.Operation.create("linalg.generic", results=[v.type for v in inits],
                                  operands=operands, attributes=attrs, regions=1)
        op.regions[0].blocks[0].append_to(new.regions[0])
        outs = [reshaped_like(r, init) for r, init in zip(new.results, op.operands[n_in:])]
    for old, r in zip(op.results, outs):
        old.replace_all_uses_with(r)
    op.erase()
    return new
