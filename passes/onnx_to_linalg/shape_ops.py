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
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, convert_scalar, index_t, is_float
from .tensor_util import elem_index, from_index, loop_index, scalar_of

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
    t = b.result_type(op)
    shp = op.input(0)
    dims = b.out_dims(op, 0, lambda k: elem_index(b, shp, k))
    return [b.full(dims, t.element_type, _fill_value(op, t.element_type))]


@lowering("Range", 11, 27)
def lower_range(op: OnnxOp, b: LoweringContext):
    t = b.result_type(op)
    et = t.element_type
    start, limit, delta = (scalar_of(b, op.input(k)) for k in range(3))

    def count(_k):
        if is_float(et):
            n = math.ceil(arith.divf(arith.subf(limit, start), delta))
            n = arith.fptosi(I64(), n)
        else:
            n = arith.ceildivsi(arith.subi(limit, start), delta)
            n = convert_scalar(n, False, I64())
        n = arith.maxsi(n, b.const(0, I64()))
        return arith.index_cast(index_t(), n)
    dims = b.out_dims(op, 0, count)

    def body(_o):
        i = loop_index(0)
        if is_float(et):
            fi = arith.sitofp(et, arith.index_cast(I64(), i))
            return arith.addf(start, arith.mulf(fi, delta))
        ii = arith.index_cast(et, i)
        return arith.addi(start, arith.muli(ii, delta))
    return [b.generic([], [b.empty(dims, et)], [affine_map(1, [0])], ["parallel"], body)[0]]
