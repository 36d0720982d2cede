"""OneHot and EyeLike -> one linalg.generic comparing loop indices
(linalg.index) with the index value / the diagonal offset k."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.one_hot import one_hot_dims, one_hot_inputs
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap

I = arith.CmpIPredicate


def loop_index(k: int) -> ir.Value:
    return linalg.IndexOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result


def _first(b: LoweringContext, op: OnnxOp, v: ir.Value, what: str) -> ir.Value:
    """Element 0 of a scalar or 1-D tensor (its size checked by one_hot_inputs)."""
    t = b.ranked(op, v, what)
    if t.rank > 1:
        op.fail(f"{what} must be a scalar or a 1-element tensor")
    return tensor.extract(v, [b.index(0)] * t.rank)


@lowering("OneHot", 9, 11, 28)
def lower_one_hot(op: OnnxOp, b: LoweringContext):
    idx, depth, values = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, idx, "indices").rank
    out_t = b.result_type(op)
    et = out_t.element_type
    axis = op.attrs.axis
    axis = axis + r + 1 if axis < 0 else axis
    if not 0 <= axis <= r:
        op.fail(f"axis {op.attrs.axis} out of range for rank {r + 1}")
    if b.ranked(op, values, "values").rank != 1:
        op.fail("values must be a 1-D tensor of 2 elements (off, on)")
    i64 = ir.IntegerType.get_signless(64)
    ctx = checks(op, b)
    b.ranked(op, depth, "depth")
    one_hot_inputs(ctx, b.ixdims(depth), b.ixdims(values))
    d = _first(b, op, depth, "depth")
    # a float depth converts toward zero (as the reference's int cast)
    d64 = arith.fptosi(i64, d) if is_float(d.type) else convert_scalar(d, b.unsigned(depth), i64)
    depth_ix = arith.index_cast(ir.IndexType.get(), d64)
    dims = one_hot_dims(ctx, b.ixdims(idx), wrap(depth_ix), axis)
    dims = [out_t.shape[k] if not out_t.is_dynamic_dim(k) else index_of(dims[k])
            for k in range(r + 1)]
    off = tensor.extract(values, [b.index(0)])
    on = tensor.extract(values, [b.index(1)])
    uns = b.unsigned(idx)
    in_map = affine_map(r + 1, [k for k in range(r + 1) if k != axis])

    def body(i, _o):
        iv = arith.fptosi(i64, i) if is_float(i.type) else convert_scalar(i, uns, i64, False)
        iv = arith.select(arith.cmpi(I.slt, iv, b.const(0, i64)), arith.addi(iv, d64), iv)
        hit = arith.cmpi(I.eq, iv, arith.index_cast(i64, loop_index(axis)))
        return arith.select(hit, on, off)
    return b.generic([idx], [b.empty(dims, et)], [in_map, affine_map(r + 1, list(range(r + 1)))],
                     ["parallel"] * (r + 1), body)


@lowering("EyeLike", 9, 22)
def lower_eye_like(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 2:
        op.fail("input must be 2-D")
    et = b.result_type(op).element_type
    i64 = ir.IntegerType.get_signless(64)
    k = op.attrs.k
    one = b.const(1.0, et) if is_float(et) else b.const(1, et)
    zero = b.const(0.0, et) if is_float(et) else b.const(0, et)

    def body(_o):
        i = arith.index_cast(i64, loop_index(0))
        j = arith.index_cast(i64, loop_index(1))
        return arith.select(arith.cmpi(I.eq, arith.subi(j, i), b.const(k, i64)), one, zero)
    return b.generic([], [b.empty(b.dims(x), et)], [affine_map(2, [0, 1])],
                     ["parallel", "parallel"], body)
