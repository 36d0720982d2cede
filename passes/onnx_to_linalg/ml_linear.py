"""LinearClassifier / LinearRegressor: one linalg.matmul of X (as f32) with
the constant W^T, its init the intercepts broadcast over rows (the -O3
matmul kernel packs the constant W^T at compile time); then the classifier's
labels and post_transform (ml_post.py), following onnxruntime: labels from
the raw scores (binary: score > 0 -> label 1), binary scores written as two
columns [1 - p, p] of the transformed score p (NONE: p = s; onnx.reference
writes [-s, s] there)."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_linear import ML, linear_params, n_classes_out
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.ml_post import (argmax_labels, col0_map, dense_const,
                                                        logistic, post_transform, to_float)
from onnx_mlir_py.passes.onnx_to_linalg.ml_outputs import label_table
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index


def scores(op: OnnxOp, b: LoweringContext, n_out: int) -> tuple[ir.Value, list]:
    """X W^T + b as f32 [N, n_out], and its dims."""
    x = op.input(0)
    if b.ranked(op, x, "X").rank != 2:
        op.fail("X must be 2-D [N, features]")
    w, bias = linear_params(op, n_out)
    f32 = ir.F32Type.get()
    xf = to_float(b, x, f32)
    n, c = b.dim(x, 0), b.dim(x, 1)
    if isinstance(c, int) and c != w.shape[1]:
        op.fail(f"X has {c} features, the coefficients {w.shape[1]}")
    if not isinstance(c, int):
        b.require(arith.cmpi(arith.CmpIPredicate.eq, c, b.index(w.shape[1])),
                  f"node '{op.name}' ({op.op_type}): X has {{0}} features, the coefficients "
                  f"{w.shape[1]}", c)
        xf = b.cast_to(xf, b.type_of([n, w.shape[1]], f32))
    dims = [n, n_out]
    bc = dense_const(bias, f32)
    init = b.generic([bc], [b.empty(dims, f32)], [affine_map(2, [1]), affine_map(2, [0, 1])],
                     ["parallel", "parallel"], lambda v, _o: v)[0]
    wt = dense_const(np.ascontiguousarray(w.T), f32)
    return linalg.matmul(xf, wt, outs=[init]), dims


@lowering("LinearRegressor", 1, domain=ML)
def lower_linear_regressor(op: OnnxOp, b: LoweringContext):
    s, dims = scores(op, b, op.attrs.targets)
    post = op.attrs.post_transform
    if dims[1] > 1 or post == "PROBIT":
        s = post_transform(b, s, dims, post)
    return [s]


@lowering("LinearClassifier", 1, domain=ML)
def lower_linear_classifier(op: OnnxOp, b: LoweringContext):
    labels = label_table(op)        # string labels: their indices (ml_outputs.py)
    e, cols = n_classes_out(op)
    if e == 1 and len(labels) != 2 and op.attrs.classlabels_strings:
        op.fail("one score column with string labels needs exactly two labels")
    s, dims = scores(op, b, e)
    post = op.attrs.post_transform
    f32 = ir.F32Type.get()
    if e > 1:
        y = argmax_labels(b, s, dims, labels)
        return [y, post_transform(b, s, dims, post)]
    # one score column: label[1] if score > 0 else label[0] (1 / 0 without two labels)
    pos, neg = (labels[1], labels[0]) if len(labels) == 2 else (1, 0)
    i64 = ir.IntegerType.get_signless(64)
    y = b.generic([s], [b.empty([dims[0]], i64)], [affine_map(2, [0, 1]), affine_map(2, [0])],
                  ["parallel", "reduction"], lambda v, _o: arith.select(
                      arith.cmpf(arith.CmpFPredicate.OGT, v, b.const(0.0, f32)),
                      b.const(pos, i64), b.const(neg, i64)))[0]
    if cols == 1:
        return [y, post_transform(b, s, dims, post) if post == "PROBIT" else s]
    if post not in ("NONE", "LOGISTIC"):
        op.fail(f"post_transform {post} with one score column (binary) is not supported")
    out_dims = [dims[0], 2]

    def two(v, _o):
        first = arith.cmpi(arith.CmpIPredicate.eq, loop_index(1), b.index(0))
        p = logistic(b, v) if post == "LOGISTIC" else v
        return arith.select(first, arith.subf(b.const(1.0, f32), p), p)
    z = b.generic([s], [b.empty(out_dims, f32)], [col0_map(), affine_map(2, [0, 1])],
                  ["parallel", "parallel"], two)[0]
    return [y, z]

