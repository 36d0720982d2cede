"""Tile + vectorize the data-movement and elementwise ops around the kernels.

Candidates: ``linalg.generic`` with only parallel loops (or one trailing
reduction loop: row reductions such as softmax sums), ``linalg.transpose``
and ``linalg.copy`` (what the pack/unpack lowering produces), on static
shapes, where every operand is *contiguous in the innermost loop* (its map's
last result is the last loop dim) or does not depend on it (broadcast).
Everything but the innermost dim is tiled by 1 and the innermost dim is
vectorized: whole when it is small, else in chunks of 4 vectors with a
masked tail (``vectorize`` with explicit ``vector_sizes``).
"""
from __future__ import annotations

import mlir.ir as ir

from .matmul import PACKED_ATTR
from .schedule import apply_to_ops, walk
from .target import Target

WHOLE_ROW_MAX = 256   # innermost extent vectorized at once (parallel or reduction)


def _maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    if op.name == "linalg.generic":
        return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if op.name == "linalg.copy":
        r = op.results[0].type.rank
        ident = ir.AffineMap.get_identity(r)
        return [ident, ident]
    if op.name == "linalg.transpose":
        perm = [int(x) for x in ir.DenseI64ArrayAttr(op.attributes["permutation"])]
        r = len(perm)
        # loops = output dims; input dim i is indexed by loop perm^-1 ... output[j] = in[perm[j]]
        inv = [0] * r
        for j, p in enumerate(perm):
            inv[p] = j
        src = ir.AffineMap.get(r, 0, [ir.AffineDimExpr.get(inv[i]) for i in range(r)])
        return [src, ir.AffineMap.get_identity(r)]
    return None


def _innermost_ok(maps: list[ir.AffineMap], n: int) -> bool:
    last = n - 1
    for m in maps:
        res = list(m.results)
        dims_used = [i for i in range(n) if any(str(e) == f"d{i}" for e in res)]
        if last in dims_used and (not res or str(res[-1]) != f"d{last}"):
            return False
        for e in res:
            if not isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)):
                return False
    return True


def _loop_sizes(op: ir.Operation) -> list[int] | None:
    """Static loop extents, read from the (static) output shape and maps."""
    maps = _maps(op)
    n = maps[0].n_dims
    sizes = [None] * n
    for v, m in zip(op.operands, maps):
        t = v.type
        if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
            return None
        for e, s in zip(m.results, t.shape):
            if isinstance(e, ir.AffineDimExpr):
                sizes[e.position] = s
    return None if any(s is None for s in sizes) else sizes


def candidate(op: ir.Operation) -> bool:
    if op.name not in ("linalg.generic", "linalg.transpose", "linalg.copy"):
        return False
    if PACKED_ATTR in op.attributes or len(op.results) != 1:
        return False
    # i1 buffers get a byte-wise access workaround after bufferization
    # (codegen/bool_memory.py) that vector accesses would bypass
    for v in list(op.operands) + list(op.results):
        if isinstance(v.type, ir.ShapedType) and str(v.type.element_type) == "i1":
            return False
    if op.name == "linalg.generic":
        # gathers (tensor.extract) and nested loops do not vectorize this way
        if any(o.name != "linalg.yield" and not o.name.startswith(("arith.", "math."))
               for o in walk(op)):
            return False
        iters = [str(a) for a in op.attributes["iterator_types"]]
        if any("reduction" in it for it in iters[:-1]):
            return False
    maps = _maps(op)
    if maps is None or not maps or maps[0].n_dims == 0:
        return False
    sizes = _loop_sizes(op)
    if sizes is None or 0 in sizes:
        return False
    if op.name == "linalg.generic" and "reduction" in str(op.attributes["iterator_types"][len(sizes) - 1]) \
            and sizes[-1] > WHOLE_ROW_MAX:
        return False
    return _innermost_ok(maps, len(sizes))


def schedule(op: ir.Operation, target: Target) -> str | None:
    sizes = _loop_sizes(op)
    n = len(sizes)
    inner = sizes[-1]
    chunk = inner if inner <= WHOLE_ROW_MAX else 4 * target.vector_width
    tiles = [1] * (n - 1) + [chunk if chunk < inner else 0]
    vec = [1] * (n - 1) + [chunk]
    if all(t == 0 or t == s for t, s in zip(tiles, sizes)) and n == 1:
        tiled = "    %t = transform.cast %op : !transform.any_op to !transform.any_op\n"
    else:
        k = sum(1 for t in tiles if t)
        loops = ", ".join(["!transform.any_op"] * k)
        tiled = (f"    %t, %l:{k} = transform.structured.tile_using_for %op tile_sizes {tiles}\n"
                 f"      : (!transform.any_op) -> (!transform.any_op, {loops})\n")
    masked = inner % chunk != 0
    vsizes = f" vector_sizes {vec}" if masked else ""
    return tiled + f"""    transform.structured.vectorize %t{vsizes} : !transform.any_op
"""


def vectorize_elementwise(module: ir.Module, target: Target) -> int:
    ops = [op for op in walk(module.operation) if candidate(op)]
    return apply_to_ops(module, ops, lambda op: schedule(op, target))
