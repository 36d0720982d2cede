"""Trilu -> one linalg.generic keeping x where j - i >= k (upper) or <= k
(lower) over the last two dims, 0 elsewhere."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

I = arith.CmpIPredicate


def _c(x, et):
    return LoweringContext.const(x, et)


@lowering("Trilu", 14)
def lower_trilu(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < 2:
        op.fail("input must have rank >= 2")
    et = x.type.element_type
    i64 = ir.IntegerType.get_signless(64)
    k = op.input(1)
    if k is not None:
        if b.ranked(op, k).rank != 0 and (k.type.rank != 1 or k.type.shape[0] != 1):
            op.fail("k must be a scalar")
        kv = tensor.extract(k, [] if k.type.rank == 0 else [b.index(0)])
    else:
        kv = _c(0, i64)
    upper = op.attrs.upper
    dims = b.dims(x)
    ident = affine_map(r, list(range(r)))
    zero = _c(0.0, et) if is_float(et) else _c(0, et)

    def body(v, _o):
        i = arith.index_cast(i64, loop_index(r - 2))
        j = arith.index_cast(i64, loop_index(r - 1))
        d = arith.subi(j, i)
        keep = arith.cmpi(I.sge if upper else I.sle, d, kv)
        return arith.select(keep, v, zero)
    return b.generic([x], [b.empty(dims, et)], [ident, ident], ["parallel"] * r, body)
