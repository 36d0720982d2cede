"""Cast / CastLike -> one elementwise linalg.generic converting each element
(``builder.convert_scalar``: float <-> int, widths, signedness)."""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, convert_scalar, elem_of,
                                                        to_signless)
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic


@lowering("Cast", 6, 9, 13, 19, 21, 23, 24, 25, 28)
def lower_cast(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    src_uns = b.unsigned(x)
    onnx_dst = elem_of(op.op.results[0].type)
    dst = to_signless(onnx_dst)
    dst_uns = isinstance(onnx_dst, ir.IntegerType) and onnx_dst.is_unsigned
    for t in (elem_of(x.type), dst):
        if not isinstance(t, (ir.F16Type, ir.F32Type, ir.F64Type, ir.BF16Type, ir.IntegerType)) \
                or (isinstance(t, ir.IntegerType) and t.width not in (1, 8, 16, 32, 64)):
            op.fail(f"cast with element type {t} is not supported")
    return [broadcast_generic(op, b, [x], lambda s: convert_scalar(s, src_uns, dst, dst_uns))]


@lowering("CastLike", 15, 19, 21, 23, 24, 25)
def lower_cast_like(op: OnnxOp, b: LoweringContext):
    return lower_cast(op, b)
