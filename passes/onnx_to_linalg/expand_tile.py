"""Expand (numpy broadcast to a shape) and Tile.

Result dims come from the shape helpers ``expand_dims`` / ``tile_dims``
(dialects/onnx/ops/expand_tile.py) over the operand's elements, constants
or run-time values; their checks (broadcast compatibility, negative dims)
run in the compiled code. Expand: one broadcasting linalg.generic; an input
dim that is dynamic and 1 at run time is broadcast first (a run-time branch).
Tile: a generic writing an interleaved (repeat_0, d_0, repeat_1, d_1, ...)
tensor whose input map skips the repeat dims, collapsed to (repeat_k * d_k).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.expand_tile import expand_dims, tile_dims
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import (IxVal, checks, fit_result, index_of,
                                                        int_elements)
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import insert_slice


def _padded_shape(op: OnnxOp, b: LoweringContext, shp: ir.Value, r: int, xr: int) -> list:
    """The shape operand's elements right-aligned to the result rank ``r``
    (leading 1s). Its length must be known, or implied: ``r`` when the result
    has more dims than the input; else it is read at run time (<= r)."""
    t = b.ranked(op, shp, "shape")
    if t.rank != 1:
        op.fail(f"the shape operand must be 1-D, got rank {t.rank}")
    if not t.is_dynamic_dim(0) or r > xr:
        n = t.shape[0] if not t.is_dynamic_dim(0) else r
        if n > r:
            op.fail(f"the shape operand has {n} elements, more than the result rank {r}")
        return [1] * (r - n) + int_elements(op, b, shp, n, "shape")
    # length L <= r only known at run time: insert it at offset r - L into r ones
    ln = IxVal(b.dim(shp, 0))
    checks(op, b).require(D.le(ln, r), f"the shape operand has {{0}} elements, more than "
                                       f"the result rank {r}", ln)
    ones = b.full([r], shp.type.element_type, 1)
    padded = insert_slice(shp, ones, [index_of(r - ln)], [ln.value])
    return int_elements(op, b, padded, r, "shape")


@lowering("Expand", 8, 13)
def lower_expand(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    xr = b.ranked(op, x).rank
    r = b.result_type(op).rank
    if xr > r:
        op.fail(f"input rank {xr} exceeds result rank {r}")
    shape = _padded_shape(op, b, op.input(1), r, xr)
    in_dims = b.ixdims(x)
    dims = fit_result(op, b, expand_dims(checks(op, b), in_dims, shape))
    dims = [index_of(d) for d in dims]
    # a result dim that is the input's own (shape element statically 1)
    sole = {r - xr + j: (x, j) for j in range(xr)
            if x.type.is_dynamic_dim(j) and D.is_static(shape[r - xr + j]) and
            shape[r - xr + j] == 1}
    x = runtime_broadcast(b, x, dims, r, sole)
    exprs = []
    for j in range(xr):
        k = r - xr + j
        one = not x.type.is_dynamic_dim(j) and x.type.shape[j] == 1
        exprs.append("0" if one and dims[k] != 1 else k)
    maps = [affine_map(r, exprs), affine_map(r, list(range(r)))]
    init = b.empty(dims, b.result_type(op).element_type)
    return [b.generic([x], [init], maps, ["parallel"] * r, lambda v, _o: v)[0]]


@lowering("Tile", 6, 13)
def lower_tile(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    reps = int_elements(op, b, op.input(1), r, "repeats")
    in_dims = b.ixdims(x)
    fit_result(op, b, tile_dims(checks(op, b), in_dims, reps))   # checks only
    reps = [index_of(v) for v in reps]
    dims = [index_of(d) for d in in_dims]
    inter = []
    for k in range(r):
        inter += [reps[k], dims[k]]
    et = x.type.element_type
    init = b.empty(inter, et)
    n = 2 * r
    maps = [affine_map(n, [2 * k + 1 for k in range(r)]), affine_map(n, list(range(n)))]
    y = b.generic([x], [init], maps, ["parallel"] * n, lambda v, _o: v)[0]
    out = [inter[2 * k] * inter[2 * k + 1] if isinstance(inter[2 * k], int) and
           isinstance(inter[2 * k + 1], int) else None for k in range(r)]
    out_t = ir.RankedTensorType.get([DYN if d is None else d for d in out], et)
    return [collapse(y, [[2 * k, 2 * k + 1] for k in range(r)], out_t)]
