"""Scaler, Normalizer, Binarizer, Imputer: elementwise generics with the
per-feature constants indexed by the last loop index (Normalizer: one row
reduction for the norm, then a division)."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math as mmath, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_scaling import ML, imputer_values, per_feature
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.ml_post import dense_const, to_float
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

F = arith.CmpFPredicate


def feature_values(op: OnnxOp, b: LoweringContext, x: ir.Value, name: str, values,
                   et: ir.Type):
    """A per-feature attribute as ``get()`` -> the value for the current
    element (call inside a generic body over x's dims); a run-time check that
    x's last dim matches when it is dynamic."""
    r = x.type.rank
    if r == 0:
        op.fail("X must have at least one dim")
    if len(values) == 1:
        c = b.const(values[0], et)
        return lambda: c
    last = b.dim(x, r - 1)
    if isinstance(last, int) and last != len(values):
        op.fail(f"attribute {name} has {len(values)} values for {last} features")
    if not isinstance(last, int):
        b.require(arith.cmpi(arith.CmpIPredicate.eq, last, b.index(len(values))),
                  f"node '{op.name}' ({op.op_type}): attribute {name} has {len(values)} "
                  f"values for {{0}} features", last)
    table = dense_const(np.asarray(values), et)
    return lambda: tensor.extract(table, [loop_index(r - 1)])


@lowering("Scaler", 1, domain=ML)
def lower_scaler(op: OnnxOp, b: LoweringContext):
    f32 = ir.F32Type.get()
    x = to_float(b, op.input(0), f32)
    off = feature_values(op, b, x, "offset", per_feature(op, "offset", op.attrs.offset), f32)
    sc = feature_values(op, b, x, "scale", per_feature(op, "scale", op.attrs.scale), f32)
    return [b.map_elementwise([x], b.dims(x), f32,
                              lambda v: arith.mulf(arith.subf(v, off()), sc()))]


@lowering("Normalizer", 1, domain=ML)
def lower_normalizer(op: OnnxOp, b: LoweringContext):
    """Each row (a 1-D X is one row) divided by its norm, as onnxruntime:
    MAX the largest value (signed, as the spec's max(x_i)), L1 the sum of
    |x|, L2 sign(x) * sqrt(x^2 / sum x^2); a row whose norm is 0 is copied."""
    f32 = ir.F32Type.get()
    x = to_float(b, op.input(0), f32)
    r = b.ranked(op, x, "X").rank
    if r not in (1, 2):
        op.fail("X must be 1-D or 2-D")
    norm = op.attrs.norm
    dims = b.dims(x)
    init = -float(np.finfo(np.float32).max) if norm == "MAX" else 0.0
    acc = b.full(dims[:r - 1], f32, init)
    row = affine_map(r, list(range(r - 1)))
    ident = affine_map(r, list(range(r)))

    def fold(v, a):
        if norm == "MAX":
            return arith.maximumf(a, v)
        if norm == "L1":
            return arith.addf(a, mmath.absf(v))
        return arith.addf(a, arith.mulf(v, v))
    tot = b.generic([x], [acc], [ident, row], ["parallel"] * (r - 1) + ["reduction"], fold)[0]
    zero = b.const(0.0, f32)

    def div(v, t, _o):
        if norm == "L2":
            q = mmath.sqrt(arith.divf(arith.mulf(v, v), t))
            q = arith.select(arith.cmpf(F.OLT, v, zero), arith.negf(q), q)
        else:
            q = arith.divf(v, t)
        return arith.select(arith.cmpf(F.ONE, t, zero), q, v)
    return [b.generic([x, tot], [b.empty(dims, f32)], [ident, row, ident],
                      ["parallel"] * r, div)[0]]


@lowering("Binarizer", 1, domain=ML)
def lower_binarizer(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    et = x.type.element_type
    t = op.attrs.threshold

    def body(v):
        if is_float(et):
            hit = arith.cmpf(F.OGT, v, b.const(t, et))
            one, zero = b.const(1.0, et), b.const(0.0, et)
        else:
            hit = arith.cmpf(F.OGT, arith.sitofp(ir.F64Type.get(), v),
                             b.const(t, ir.F64Type.get()))
            one, zero = b.const(1, et), b.const(0, et)
        return arith.select(hit, one, zero)
    return [b.map_elementwise([x], b.dims(x), et, body)]


@lowering("Imputer", 1, domain=ML)
def lower_imputer(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    et = x.type.element_type
    values, replaced = imputer_values(op)
    if is_float(et) != bool(op.attrs.imputed_value_floats):
        op.fail(f"imputed values of the other kind than X ({et})")
    get = feature_values(op, b, x, "imputed values", values, et)
    if is_float(et):
        if np.isnan(replaced):
            miss = lambda v: arith.cmpf(F.UNO, v, v)  # noqa: E731
        else:
            miss = lambda v: arith.cmpf(F.OEQ, v, b.const(replaced, et))  # noqa: E731
    else:
        miss = lambda v: arith.cmpi(arith.CmpIPredicate.eq, v, b.const(replaced, et))  # noqa
    return [b.map_elementwise([x], b.dims(x), et, lambda v: arith.select(miss(v), get(), v))]
