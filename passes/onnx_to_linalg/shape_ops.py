"""Shape, Size, ConstantOfShape, Range.

Shape/Size build their int64 result from ``tensor.dim`` (static dims are
constants); ConstantOfShape fills a tensor whose dynamic dims are read from
the shape operand; Range is a linalg.generic ``start + i * delta`` with the
count ``max(ceil((limit - start) / delta), 0)`` computed at run time.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.shape_ops import cos_dims, range_len
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        index_t, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import (IxCond, IxVal, checks, fit_result, index_of,
                                                        int_elements)
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import from_index, loop_index, scalar_of

I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731


def _i64_vector(b: LoweringContext, vals: list) -> ir.Value:
    """1-D int64 tensor from ints / index Values."""
    t = ir.RankedTensorType.get([len(vals)], I64())
    if all(isinstance(v, int) for v in vals):
        return arith.constant(t, ir.DenseElementsAttr.get(np.asarray(vals, np.int64), type=t))
    return tensor.from_elements(t, [b.const(v, I64()) if isinstance(v, int)
                                    else from_index(v, I64()) for v in vals])


@lowering("Shape", 1, 13, 15, 19, 21, 23, 24, 25)
def lower_shape(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    dims = b.dims(x)
    if op.version >= 15:
        start, end = op.attrs.start, op.attrs.end
        dims = dims[slice(*slice(start, end).indices(r)[:2])]
    return [_i64_vector(b, dims)]


@lowering("Size", 1, 13, 19, 21, 23, 24, 25)
def lower_size(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    n, dyn = 1, None
    for d in b.dims(x):
        if isinstance(d, int):
            n *= d
        else:
            dyn = d if dyn is None else arith.muli(dyn, d)
    t = ir.RankedTensorType.get([], I64())
    if dyn is None:
        return [arith.constant(t, ir.DenseElementsAttr.get(np.asarray(n, np.int64), type=t))]
    tot = arith.muli(dyn, b.index(n)) if n != 1 else dyn
    return [tensor.from_elements(t, [from_index(tot, I64())])]


def _fill_value(op: OnnxOp, et: ir.Type):
    if "value" not in op.op.attributes:
        return 0.0 if is_float(et) else 0
    a = op.op.attributes["value"]
    if not isinstance(a, ir.DenseElementsAttr):
        op.fail("attribute 'value' is not a dense tensor")
    v = np.array(a).reshape(-1)[0]
    return float(v) if is_float(et) else int(v)


@lowering("ConstantOfShape", 9, 20, 21, 23, 24, 25)
def lower_constant_of_shape(op: OnnxOp, b: LoweringContext):
    """Result dims: ``cos_dims`` over the input's elements (constants or
    run-time values, checked >= 0 in the compiled code)."""
    t = b.result_type(op)
    dims = int_elements(op, b, op.input(0), t.rank, "input")
    dims = fit_result(op, b, cos_dims(checks(op, b), dims))
    return [b.full([index_of(d) for d in dims], t.element_type,
                   _fill_value(op, t.element_type))]


def _scalar(op: OnnxOp, b: LoweringContext, v: ir.Value, what: str) -> ir.Value:
    """The one element of a 0-D or 1-element operand (a dynamic size is
    checked to be 1 at run time)."""
    if v.type.rank and v.type.is_dynamic_dim(0):
        n = IxVal(b.dim(v, 0))
        checks(op, b).require(D.eq(n, 1), f"{what} must be a scalar, got {{0}} elements", n)
    return scalar_of(b, v)


def _require_countable(op: OnnxOp, b: LoweringContext, et, start, limit, delta) -> None:
    """The length, estimated in f64, is a number below 2**62 (not NaN or
    inf: limit = inf); for integers ``limit - start`` also fits (no i64
    overflow): else the length computation wraps (to 0 elements, silently)."""
    f64 = ir.F64Type.get()
    fl = is_float(et)
    s, l, d = (convert_scalar(v, False, f64) for v in (start, limit, delta))
    span = arith.subf(l, s)
    big = b.const(float(2 ** 62), f64)
    q = math.ceil(arith.divf(span, d))
    F = arith.CmpFPredicate
    ok = arith.andi(arith.cmpf(F.OLT, q, big), arith.cmpf(F.OGT, q, arith.negf(big)))
    if not fl:
        ok = arith.andi(ok, arith.cmpf(F.OLT, math.absf(span), big))
    b.require(ok, f"node '{op.name}' ({op.op_type}): the number of elements of "
                  f"ceil((limit - start) / delta) is not finite or too large")


@lowering("Range", 11, 27)
def lower_range(op: OnnxOp, b: LoweringContext):
    """Length ``range_len`` (the shape rule's helper) at run time; then a
    linalg.generic ``start + i * delta``."""
    t = b.result_type(op)
    et = t.element_type
    start, limit, delta = (_scalar(op, b, op.input(k), w)
                           for k, w in enumerate(("start", "limit", "delta")))
    chk = checks(op, b)
    if is_float(et):
        chk.require(IxCond(arith.cmpf(arith.CmpFPredicate.ONE, delta, b.const(0.0, et))),
                    "delta must not be 0")

        def fceil(span, d):
            q = math.ceil(arith.divf(span, d))
            return IxVal(arith.index_cast(index_t(), arith.fptosi(I64(), q)))
        n = range_len(chk, start, limit, delta, fceil, arith.subf)
    else:
        def ix(v):
            return IxVal(arith.index_cast(index_t(), convert_scalar(v, False, I64())))
        n = range_len(chk, ix(start), ix(limit), ix(delta))
    _require_countable(op, b, et, start, limit, delta)     # before n is used
    dims = [index_of(d) for d in fit_result(op, b, [n])]

    def body(_o):
        i = loop_index(0)
        if is_float(et):
            fi = arith.sitofp(et, arith.index_cast(I64(), i))
            return arith.addf(start, arith.mulf(fi, delta))
        ii = arith.index_cast(et, i)
        return arith.addi(start, arith.muli(ii, delta))
    return [b.generic([], [b.empty(dims, et)], [affine_map(1, [0])], ["parallel"], body)[0]]
