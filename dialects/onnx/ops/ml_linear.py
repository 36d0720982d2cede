"""LinearClassifier and LinearRegressor (ai.onnx.ml v1): scores = X W^T + b.

* LinearClassifier: X [N, C] -> Y [N] labels, Z [N, E] f32 scores, E the
  number of intercepts (one per class; E = 1 with two labels is the binary
  case, Z then has 2 columns as onnxruntime writes them).
* LinearRegressor: X [N, C] -> Y [N, targets] f32.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import i64

ML = "ai.onnx.ml"
POST = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")


def linear_params(op: OnnxOp, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """(W [n_out, C], b [n_out]) from coefficients / intercepts (checked)."""
    coef = np.asarray(op.attrs.coefficients or [], np.float64)
    if n_out < 1 or coef.size == 0 or coef.size % n_out:
        op.fail(f"coefficients has {coef.size} values, not a multiple of {n_out} outputs")
    b = np.asarray(op.attrs.intercepts or [0.0] * n_out, np.float64)
    if b.size != n_out:
        op.fail(f"intercepts has {b.size} values for {n_out} outputs")
    if op.attrs.post_transform not in POST:
        op.fail(f"post_transform {op.attrs.post_transform!r} is not one of {', '.join(POST)}")
    return coef.reshape(n_out, -1), b


def classifier_labels(op: OnnxOp) -> list:
    ints, strs = op.attrs.classlabels_ints, op.attrs.classlabels_strings
    if bool(ints) == bool(strs):
        op.fail("exactly one of classlabels_ints and classlabels_strings must be given")
    return list(ints or strs)


def n_classes_out(op: OnnxOp) -> tuple[int, int]:
    """(E score rows of W, columns of Z): E = len(intercepts) (or of the
    labels when intercepts is absent); binary (E = 1, 2 labels) -> 2 columns."""
    labels = classifier_labels(op)
    e = len(op.attrs.intercepts or []) or len(labels)
    return e, 2 if e == 1 and len(labels) == 2 else e


def _features(op: OnnxOp, w: np.ndarray):
    x = op.shape(op.input(0))
    if x is None:
        return None
    if len(x) != 2:
        op.fail(f"X must be 2-D [N, features], got rank {len(x)}")
    if x[1] is not None and x[1] != w.shape[1]:
        op.fail(f"X has {x[1]} features, the coefficients {w.shape[1]}")
    return x[0]


@shape_rule("LinearClassifier", 1, domain=ML)
def _classifier_shape(op: OnnxOp):
    e, cols = n_classes_out(op)
    n = _features(op, linear_params(op, e)[0])
    et = ir.Type.parse("!onnx.string") if op.attrs.classlabels_strings else i64()
    return [tensor((n,), et), tensor((n, cols), ir.F32Type.get())]


@shape_rule("LinearRegressor", 1, domain=ML)
def _regressor_shape(op: OnnxOp):
    t = op.attrs.targets
    n = _features(op, linear_params(op, t)[0])
    return [tensor((n, t), ir.F32Type.get())]


@verifier("LinearClassifier", 1, domain=ML)
def _classifier_verify(op: OnnxOp):
    _classifier_shape(op)


@verifier("LinearRegressor", 1, domain=ML)
def _regressor_verify(op: OnnxOp):
    _regressor_shape(op)
