"""Register transposes that upstream's lowering leaves to LLVM as one wide
shuffle, rewritten before ``VECTOR_CLEANUP`` lowers the rest (issue #29).

``lower_transpose`` (``shuffle_16x16``) has a shuffle network for 16x16
blocks only; any other 2-D ``vector.transpose`` becomes one gather of the
whole block, which LLVM sees as a ``shufflevector`` of rows x columns lanes
(256 for the 8-pixel x 32-filter tile of the direct conv) and lowers
slowly: its instruction selection took 0.1-0.2 s per kernel for them, the
largest share of ResNet-50's LLVM time. Here, before that lowering:

- a transposed broadcast of a 1-D vector (a packed matmul's bias per row
  of its ``[rows, lanes]`` accumulator: ``vector.broadcast`` of
  ``vector<R>`` to ``vector<C x R>``, transposed to ``vector<R x C>``)
  becomes R broadcasts of its scalars;
- a transpose of few rows, ``vector<R x C>`` to ``vector<C x R>`` with
  2 <= R <= 8 and C a multiple of 4, 32-bit elements (the direct conv's
  tile, the pixel-row convs' last partial block): the rows, padded with
  zeros to 4 or 8, go through a network of two-input shuffles that stay
  within 4-lane groups (x86: ``unpcklps`` / ``unpckhps``, ``unpcklpd`` /
  ``unpckhpd``), after which each group of 4 lanes of ``v[k]`` holds one
  column of 4 rows; each output row is one shuffle of its lanes.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, ub, vector

from onnx_mlir_py.ir_util import walk_ops

MAX_ROWS = 8
# a transposed broadcast of more rows is left to upstream (a row broadcast
# each: a register tile has at most 32 rows)
MAX_BROADCAST_ROWS = 32


def _permutation(op: ir.Operation) -> list[int]:
    return [int(p) for p in ir.DenseI64ArrayAttr(op.attributes["permutation"])]


def _transposed_broadcast(op: ir.Operation) -> ir.Value | None:
    """The 1-D source of a ``vector.transpose`` [1, 0] of a
    ``vector.broadcast`` of a 1-D vector, else None."""
    src = op.operands[0]
    owner = src.owner if isinstance(src, ir.OpResult) else None
    if owner is None or owner.name != "vector.broadcast":
        return None
    x = owner.operands[0]
    if not isinstance(x.type, ir.VectorType) or x.type.rank != 1 or x.type.scalable \
            or x.type.shape[0] > MAX_BROADCAST_ROWS:
        return None
    return x


def _narrow(t: ir.Type) -> bool:
    """A ``vector<R x C>`` of 32-bit elements the shuffle network takes."""
    if not isinstance(t, ir.VectorType) or t.rank != 2 or t.scalable:
        return False
    rows, cols = t.shape
    e = t.element_type
    wide32 = isinstance(e, ir.F32Type) or (isinstance(e, ir.IntegerType) and e.width == 32)
    return wide32 and 2 <= rows <= MAX_ROWS and cols % 4 == 0 and cols > rows


def _quads(rows: list[ir.Value], cols: int) -> list[ir.Value]:
    """Four rows (vectors of ``cols``) shuffled so that lanes [4g, 4g + 4)
    of result k are column 4g + k of the rows."""
    def two(a, b, pick):
        return vector.shuffle(a, b, [i for g in range(cols // 4) for i in pick(4 * g)])
    lo = [two(rows[i], rows[i + 1], lambda b: (b, cols + b, b + 1, cols + b + 1)) for i in (0, 2)]
    hi = [two(rows[i], rows[i + 1], lambda b: (b + 2, cols + b + 2, b + 3, cols + b + 3))
          for i in (0, 2)]
    out = []
    for x, y in (lo, hi):
        out.append(two(x, y, lambda b: (b, b + 1, cols + b, cols + b + 1)))
        out.append(two(x, y, lambda b: (b + 2, b + 3, cols + b + 2, cols + b + 3)))
    return out


def _rewrite_narrow(op: ir.Operation) -> ir.Value:
    src = op.operands[0]
    rows, cols = src.type.shape
    padded = 4 if rows <= 4 else 8
    rs = [vector.extract(src, [], [i]) for i in range(rows)]
    if rows < padded:
        row_t = ir.VectorType.get([cols], src.type.element_type)
        e = row_t.element_type
        zero = ir.FloatAttr.get(e, 0.0) if isinstance(e, ir.F32Type) else ir.IntegerAttr.get(e, 0)
        rs += [arith.constant(row_t, ir.DenseElementsAttr.get_splat(row_t, zero))] * (padded - rows)
    q = [_quads(rs[h:h + 4], cols) for h in range(0, padded, 4)]
    res_t = op.results[0].type
    acc = ub.poison(res_t)
    for j in range(cols):
        g, k = divmod(j, 4)
        lanes = [4 * g + i for i in range(min(rows, 4))]
        if rows > 4:
            lanes += [cols + 4 * g + i for i in range(rows - 4)]
        col = vector.shuffle(q[0][k], q[-1][k], lanes)
        acc = vector.insert(col, acc, [], [j])
    return acc


def _rewrite_broadcast(op: ir.Operation, x: ir.Value) -> ir.Value:
    rt = op.results[0].type
    rows, cols = rt.shape
    row_t = ir.VectorType.get([cols], rt.element_type)
    acc = ub.poison(rt)
    for i in range(rows):
        acc = vector.insert(vector.broadcast(row_t, vector.extract(x, [], [i])), acc, [], [i])
    return acc


def rewrite_register_transposes(module: ir.Module) -> int:
    """The transposes of the module docstring rewritten; returns how many."""
    done = 0
    for op in walk_ops(module, ("vector.transpose",)):
        if _permutation(op) != [1, 0] or op.operands[0].type.rank != 2:
            continue
        x = _transposed_broadcast(op)
        if x is None and not _narrow(op.operands[0].type):
            continue
        owner = op.operands[0].owner
        with ir.InsertionPoint(op), op.location:
            new = _rewrite_broadcast(op, x) if x is not None else _rewrite_narrow(op)
        op.results[0].replace_all_uses_with(new)
        op.erase()
        if x is not None and not list(owner.results[0].uses):
            owner.erase()
        done += 1
    return done
