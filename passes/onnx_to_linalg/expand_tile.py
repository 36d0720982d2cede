"""Expand (numpy broadcast to a shape) and Tile.

Expand: one broadcasting linalg.generic; a result dim that is dynamic is
``max(input dim, shape[k])`` read at run time. Tile: a generic writing an
interleaved (repeat_0, d_0, repeat_1, d_1, ...) tensor whose input map skips
the repeat dims, collapsed to (repeat_k * d_k) — pure affine, no gathers.
"""
from __future__ import annotations


from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map
from .reshape import collapse
from .tensor_util import const_np, elem_index, imax, imul


@lowering("Expand", 8, 13)
def lower_expand(op: OnnxOp, b: LoweringContext):
    x, shp = op.input(0), op.input(1)
    b.ranked(op, x)
    t = b.result_type(op)
    r, xr = t.rank, x.type.rank
    if xr > r:
        op.fail(f"input rank {xr} exceeds result rank {r}")

    L = b.ranked(op, shp, "shape").shape[0]
    if shp.type.is_dynamic_dim(0):
        op.fail("the shape operand must have a static length")

    def dyn(k):
        si, j = k - (r - L), k - (r - xr)
        s = elem_index(b, shp, si) if si >= 0 else None
        if j < 0:
            return s
        d = b.dim(x, j)
        if isinstance(d, int) and d != 1:
            return b.index(d)
        if s is None:
            return b.as_index(d)
        return imax(b, d, s)
    dims = b.out_dims(op, 0, dyn)
    exprs = []
    for j in range(xr):
        k = r - xr + j
        one = not x.type.is_dynamic_dim(j) and x.type.shape[j] == 1
        exprs.append("0" if one and dims[k] != 1 else k)
    maps = [affine_map(r, exprs), affine_map(r, list(range(r)))]
    init = b.empty(dims, t.element_type)
    return [b.generic([x], [init], maps, ["parallel"] * r, lambda v, _o: v)[0]]


@lowering("Tile", 6, 13)
def lower_tile(op: OnnxOp, b: LoweringContext):
    x, rep = op.input(0), op.input(1)
    r = b.ranked(op, x).rank
    c = const_np(rep)
    reps = [int(v) for v in c.reshape(-1)] if c is not None else \
        [elem_index(b, rep, k) for k in range(r)]
    if len(reps) != r:
        op.fail(f"repeats has {len(reps)} entries for input rank {r}")
    if any(isinstance(v, int) and v < 0 for v in reps):
        op.fail(f"repeats {reps} has a negative entry")
    dims = b.dims(x)
    inter = []
    for k in range(r):
        inter += [reps[k], dims[k]]
    et = x.type.element_type
    init = b.empty(inter, et)
    n = 2 * r
    maps = [affine_map(n, [2 * k + 1 for k in range(r)]), affine_map(n, list(range(n)))]
    y = b.generic([x], [init], maps, ["parallel"] * n, lambda v, _o: v)[0]
    out = [imul(b, reps[k], dims[k]) for k in range(r)]
    out_t = b.type_of(out, et)
    return [collapse(y, [[2 * k, 2 * k + 1] for k in range(r)], out_t)]
