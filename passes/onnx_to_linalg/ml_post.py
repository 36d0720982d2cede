"""Score finishing shared by the ai.onnx.ml classifiers and regressors
(ml_tree.py, ml_linear.py): post_transform over rows of a [N, K] score
tensor, and the label of each row (the first largest score's class label).

The formulas are onnxruntime's / onnx.reference's (ml_common.h,
_common_classifier.py): LOGISTIC 1 / (1 + exp(-|v|)) mirrored for v < 0;
SOFTMAX with the row max subtracted; SOFTMAX_ZERO leaves scores within 1e-7
of 0 out of the exponentials (a row of such scores is 0.5 each, as the
reference); PROBIT sqrt(2) * erfinv(2v - 1) with the same closed-form
erfinv approximation (Winitzki, a = 0.147).
"""
from __future__ import annotations

import math
from typing import Sequence

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math as mmath, tensor

from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

F = arith.CmpFPredicate


def dense_const(arr: np.ndarray, et: ir.Type) -> ir.Value:
    """A constant tensor of numpy values (converted to ``et``)."""
    t = ir.RankedTensorType.get(list(arr.shape), et)
    np_t = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64,
            "i32": np.int32, "i16": np.int16, "i8": np.int8, "i1": np.bool_}[str(et)]
    a = np.ascontiguousarray(arr, dtype=np_t)
    if np_t is np.bool_:
        a = np.packbits(a, bitorder="little")
    return arith.constant(t, ir.DenseElementsAttr.get(a, type=t))


def to_float(b: LoweringContext, x: ir.Value, ct: ir.Type) -> ir.Value:
    """X converted elementwise to the compute type (ints: signed conversion)."""
    et = x.type.element_type
    if et == ct:
        return x
    dims = b.dims(x)
    if is_float(et):
        fn = (lambda v: arith.extf(ct, v)) if et.width < ct.width else \
            (lambda v: arith.truncf(ct, v))
    else:
        fn = lambda v: arith.sitofp(ct, v)  # noqa: E731
    return b.map_elementwise([x], dims, ct, fn)


def col0_map() -> ir.AffineMap:
    """(n, k) -> (n, 0): column 0 of a row, for every k."""
    return ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(0), ir.AffineConstantExpr.get(0)])


def rowwise(b: LoweringContext, s: ir.Value, dims: Sequence, body, inputs=()) -> ir.Value:
    """[N, K] -> [N, K]: ``body(v, *row_values)`` per element; ``inputs`` are [N] tensors."""
    et = s.type.element_type
    row = affine_map(2, [0])
    ident = affine_map(2, [0, 1])
    return b.generic([s, *inputs], [b.empty(dims, et)], [ident] + [row] * len(inputs) + [ident],
                     ["parallel", "parallel"], lambda v, *a: body(v, *a[:len(inputs)]))[0]


def row_reduce(b: LoweringContext, s: ir.Value, dims: Sequence, init, fn) -> ir.Value:
    """[N, K] -> [N]: fold ``fn(acc, v)`` over each row from ``init``."""
    et = s.type.element_type
    acc = b.full([dims[0]], et, init)
    return b.generic([s], [acc], [affine_map(2, [0, 1]), affine_map(2, [0])],
                     ["parallel", "reduction"], lambda v, a: fn(a, v))[0]


def logistic(b: LoweringContext, v: ir.Value) -> ir.Value:
    et = v.type
    one = b.const(1.0, et)
    e = mmath.exp(arith.negf(mmath.absf(v)))
    p = arith.divf(one, arith.addf(one, e))
    return arith.select(arith.cmpf(F.OLT, v, b.const(0.0, et)), arith.subf(one, p), p)


def probit(b: LoweringContext, v: ir.Value) -> ir.Value:
    """sqrt(2) * erfinv(2v - 1), erfinv as the reference computes it."""
    et = v.type
    c = lambda x: b.const(x, et)  # noqa: E731
    x = arith.subf(arith.mulf(c(2.0), v), c(1.0))
    sgn = arith.select(arith.cmpf(F.OLT, x, c(0.0)), c(-1.0), c(1.0))
    y = arith.mulf(arith.subf(c(1.0), x), arith.addf(c(1.0), x))
    lg = mmath.log(y)
    t = arith.addf(c(2.0 / (math.pi * 0.147)), arith.mulf(c(0.5), lg))
    t2 = arith.mulf(c(1.0 / 0.147), lg)
    r = mmath.sqrt(arith.addf(arith.negf(t), mmath.sqrt(arith.subf(arith.mulf(t, t), t2))))
    r = arith.select(arith.cmpf(F.OEQ, y, c(0.0)), c(0.0), arith.mulf(sgn, r))
    return arith.mulf(c(1.41421356), r)


def post_transform(b: LoweringContext, s: ir.Value, dims: Sequence, post: str) -> ir.Value:
    """``post`` applied to each row of [N, K] scores."""
    if post == "NONE":
        return s
    et = s.type.element_type
    if post == "LOGISTIC":
        return rowwise(b, s, dims, lambda v: logistic(b, v))
    if post == "PROBIT":
        return rowwise(b, s, dims, lambda v: probit(b, v))
    mx = row_reduce(b, s, dims, -float(np.finfo(np.float32).max), arith.maximumf)
    if post == "SOFTMAX":
        e = rowwise(b, s, dims, lambda v, m: mmath.exp(arith.subf(v, m)), [mx])
        tot = row_reduce(b, e, dims, 0.0, arith.addf)
        return rowwise(b, e, dims, lambda v, t: arith.divf(v, t), [tot])
    assert post == "SOFTMAX_ZERO", post

    def ez(v, m):
        far = arith.cmpf(F.OGT, mmath.absf(v), b.const(1e-7, et))
        return arith.select(far, mmath.exp(arith.subf(v, m)),
                            arith.mulf(v, mmath.exp(arith.negf(m))))
    e = rowwise(b, s, dims, ez, [mx])
    tot = row_reduce(b, e, dims, 0.0, arith.addf)
    return rowwise(b, e, dims, lambda v, t: arith.select(
        arith.cmpf(F.OEQ, t, b.const(0.0, et)), b.const(0.5, et), arith.divf(v, t)), [tot])


def argmax_labels(b: LoweringContext, s: ir.Value, dims: Sequence, labels: Sequence[int]
                  ) -> ir.Value:
    """[N, K] scores -> [N] int64: the label of each row's first largest score."""
    et = s.type.element_type
    i64 = ir.IntegerType.get_signless(64)
    best = b.full([dims[0]], et, -math.inf)
    arg = b.full([dims[0]], i64, 0)

    def body(v, bv, bi):
        k = arith.index_cast(i64, loop_index(1))
        better = arith.cmpf(F.OGT, v, bv)
        return arith.select(better, v, bv), arith.select(better, k, bi)
    _, idx = b.generic([s], [best, arg], [affine_map(2, [0, 1]), affine_map(2, [0]),
                                          affine_map(2, [0])], ["parallel", "reduction"], body)
    table = dense_const(np.asarray(labels, np.int64), i64)
    return b.map_elementwise([idx], [dims[0]], i64, lambda i: tensor.extract(
        table, [arith.index_cast(ir.IndexType.get(), i)]))
