"""Gather -> linalg.generic over the result: the indices tensor is an input
(read at the result dims it covers), the data element is a
``tensor.extract`` at the (negative-wrapped) index.

GatherElements / GatherND -> linalg.generic over the result with
``tensor.extract`` at computed (negative-wrapped) indices.

ScatterElements / Scatter / ScatterND -> the data tensor carried through an
``scf.for`` nest over the indices (duplicate indices make the order matter:
later updates win, reductions accumulate in index order), one
``tensor.extract`` + ``tensor.insert`` per update element.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import (require_index_components,
                                                             require_indices)
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, norm_axis, to_index
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.gather import gather_nd_dims, nd_depth, scatter_nd_check
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest


@lowering("Gather", 1, 11, 13)
def lower_gather(op: OnnxOp, b: LoweringContext):
    data, ind = op.input(0), op.input(1)
    r = b.ranked(op, data).rank
    q = b.ranked(op, ind, "indices").rank
    if r == 0:
        op.fail("data must have rank >= 1")
    axis = norm_axis(op, op.attrs.axis, r)
    ddims, idims = b.dims(data), b.dims(ind)
    out_dims = ddims[:axis] + idims + ddims[axis + 1:]
    n_out = len(out_dims)
    et = data.type.element_type
    require_indices(op, b, ind, ddims[axis], f"data axis {axis}")
    dim_ax = b.as_index(ddims[axis])

    def body(i, _o):
        iv = to_index(i)
        neg = arith.cmpi(arith.CmpIPredicate.slt, iv, b.index(0))
        iv = arith.select(neg, arith.addi(iv, dim_ax), iv)
        idx = [loop_index(k) for k in range(axis)] + [iv] + \
            [loop_index(axis + q + k) for k in range(r - axis - 1)]
        return tensor.extract(data, idx)
    init = b.empty(out_dims, et)
    maps = [affine_map(n_out, list(range(axis, axis + q))),
            affine_map(n_out, list(range(n_out)))]
    return [b.generic([ind], [init], maps, ["parallel"] * n_out, body)[0]]


def _check_within(op: OnnxOp, b: LoweringContext, ind: ir.Value, data: ir.Value,
                  axis: int) -> None:
    """indices dims (other than ``axis``) index ``data`` directly: they must
    not exceed data's (onnxruntime's rule for GatherElements/ScatterElements)."""
    chk = checks(op, b)
    for k in range(ind.type.rank):
        if k != axis:
            di, dd = b.ixdim(ind, k), b.ixdim(data, k)
            chk.require(D.le(di, dd), f"indices dim {k} is {{0}} but data dim {k} is only "
                        f"{{1}}", di, dd)


def wrap_index(b: LoweringContext, i: ir.Value, dim) -> ir.Value:
    """Integer scalar index -> index Value, negative ones counted from ``dim``."""
    iv = to_index(i)
    neg = arith.cmpi(arith.CmpIPredicate.slt, iv, b.index(0))
    return arith.select(neg, arith.addi(iv, b.as_index(dim)), iv)


# -- gathers ---------------------------------------------------------------------
@lowering("GatherElements", 11, 13)
def lower_gather_elements(op: OnnxOp, b: LoweringContext):
    data, ind = op.input(0), op.input(1)
    r = b.ranked(op, data).rank
    if b.ranked(op, ind, "indices").rank != r:
        op.fail("indices must have the rank of data")
    if r == 0:
        op.fail("data must have rank >= 1")
    axis = norm_axis(op, op.attrs.axis, r)
    _check_within(op, b, ind, data, axis)
    dim_ax = b.dim(data, axis)
    require_indices(op, b, ind, dim_ax, f"data axis {axis}")

    def body(i, _o):
        idx = [loop_index(k) for k in range(r)]
        idx[axis] = wrap_index(b, i, dim_ax)
        return tensor.extract(data, idx)
    init = b.empty(b.dims(ind), data.type.element_type)
    ident = affine_map(r, list(range(r)))
    return [b.generic([ind], [init], [ident, ident], ["parallel"] * r, body)[0]]


@lowering("GatherND", 11, 12, 13)
def lower_gather_nd(op: OnnxOp, b: LoweringContext):
    data, ind = op.input(0), op.input(1)
    r = b.ranked(op, data).rank
    q = b.ranked(op, ind, "indices").rank
    bd = op.attrs.batch_dims if op.version >= 12 else 0
    if q < 1 or r < 1:
        op.fail("data and indices must have rank >= 1")
    # a dynamic last dim of indices: the result rank gives the depth (checked)
    k = nd_depth(op, op.shape(ind), q - 1 + r - bd, b.result_type(op).rank)
    if not 0 <= bd < min(q, r) or bd + k > r:
        op.fail(f"batch_dims {bd} and index depth {k} do not fit data rank {r}")
    ddims = b.dims(data)
    out_dims = [index_of(v) for v in gather_nd_dims(checks(op, b), b.ixdims(data),
                                                     b.ixdims(ind), bd, k)]
    require_index_components(op, b, ind, ddims[bd:bd + k], bd)
    n = len(out_dims)

    def body(_o):
        outer = [loop_index(j) for j in range(q - 1)]
        idx = [loop_index(j) for j in range(bd)]
        for j in range(k):
            v = tensor.extract(ind, outer + [b.index(j)])
            idx.append(wrap_index(b, v, ddims[bd + j]))
        idx += [loop_index(q - 1 + t) for t in range(r - bd - k)]
        return tensor.extract(data, idx)
    init = b.empty(out_dims, data.type.element_type)
    return [b.generic([], [init], [affine_map(n, list(range(n)))], ["parallel"] * n, body)[0]]


# -- scatters --------------------------------------------------------------------
def combine_fn(op: OnnxOp, reduction: str, et: ir.Type, unsigned: bool):
    """(old, update) -> new element for a scatter reduction."""
    fl = is_float(et)
    boolean = isinstance(et, ir.IntegerType) and et.width == 1
    if reduction == "none":
        return lambda old, u: u
    if reduction == "add":
        return lambda old, u: (arith.addf(old, u) if fl else
                               arith.ori(old, u) if boolean else arith.addi(old, u))
    if reduction == "mul":
        return lambda old, u: (arith.mulf(old, u) if fl else
                               arith.andi(old, u) if boolean else arith.muli(old, u))
    if reduction == "max":
        return lambda old, u: (arith.maximumf(old, u) if fl else arith.ori(old, u) if boolean
                               else arith.maxui(old, u) if unsigned else arith.maxsi(old, u))
    if reduction == "min":
        return lambda old, u: (arith.minimumf(old, u) if fl else arith.andi(old, u) if boolean
                               else arith.minui(old, u) if unsigned else arith.minsi(old, u))
    op.fail(f"unknown reduction '{reduction}'")


def _reduction(op: OnnxOp) -> str:
    if "reduction" not in op.spec.attributes:
        return "none"
    red = op.attrs.reduction
    return red.decode() if isinstance(red, bytes) else red


def _scatter_elements(op: OnnxOp, b: LoweringContext):
    data, ind, upd = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, data).rank
    if b.ranked(op, ind, "indices").rank != r or b.ranked(op, upd, "updates").rank != r:
        op.fail("indices and updates must have the rank of data")
    if r == 0:
        op.fail("data must have rank >= 1")
    axis = norm_axis(op, op.attrs.axis, r)
    et = data.type.element_type
    comb = combine_fn(op, _reduction(op), et, b.unsigned(data))
    for k in range(r):      # updates are read where the indices are
        require_same_dim(op, b, upd, k, ind, k, "updates", "indices")
    _check_within(op, b, ind, data, axis)
    dim_ax = b.dim(data, axis)
    require_indices(op, b, ind, dim_ax, f"data axis {axis}")

    def body(ivs, carried):
        (acc,) = carried
        idx = list(ivs)
        idx[axis] = wrap_index(b, tensor.extract(ind, ivs), dim_ax)
        u = tensor.extract(upd, ivs)
        new = comb(tensor.extract(acc, idx), u)
        return [tensor.insert(new, acc, idx)]
    return for_nest(b, b.dims(ind), [data], body)


lowering("ScatterElements", 11, 13, 16, 18)(_scatter_elements)
lowering("Scatter", 9, 11)(_scatter_elements)


@lowering("ScatterND", 11, 13, 16, 18)
def lower_scatter_nd(op: OnnxOp, b: LoweringContext):
    data, ind, upd = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, data).rank
    q = b.ranked(op, ind, "indices").rank
    if q < 1 or r < 1:
        op.fail("data and indices must have rank >= 1")
    # a dynamic last dim of indices: the ranks give the depth (checked)
    k = nd_depth(op, op.shape(ind), q - 1 + r, b.ranked(op, upd, "updates").rank)
    if k > r:
        op.fail(f"index depth {k} exceeds data rank {r}")
    if upd.type.rank != q - 1 + r - k:
        op.fail(f"updates must have rank {q - 1 + r - k}")
    scatter_nd_check(checks(op, b), b.ixdims(data), b.ixdims(ind), b.ixdims(upd), k)
    require_index_components(op, b, ind, b.dims(data)[:k])
    comb = combine_fn(op, _reduction(op), data.type.element_type, b.unsigned(data))
    ddims = b.dims(data)
    bounds = b.dims(ind)[:q - 1] + ddims[k:]

    def body(ivs, carried):
        (acc,) = carried
        outer, inner = ivs[:q - 1], ivs[q - 1:]
        idx = [wrap_index(b, tensor.extract(ind, outer + [b.index(j)]), ddims[j])
               for j in range(k)] + inner
        new = comb(tensor.extract(acc, idx), tensor.extract(upd, ivs))
        return [tensor.insert(new, acc, idx)]
    return for_nest(b, bounds, [data], body)
