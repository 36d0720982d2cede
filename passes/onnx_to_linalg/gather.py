"""Gather -> linalg.generic over the result: the indices tensor is an input
(read at the result dims it covers), the data element is a
``tensor.extract`` at the (negative-wrapped) index."""
from __future__ import annotations

from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, norm_axis, to_index


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
