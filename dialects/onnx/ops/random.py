"""Random generators: RandomUniform, RandomNormal (shape and dtype from the
attributes, f32 by default), RandomUniformLike, RandomNormalLike,
Bernoulli (the input's shape; ``dtype`` or the input's type), Multinomial
(input [batch, classes] of unnormalized log-probabilities -> [batch,
sample_size], int32 by default)."""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import dtype_attr, dtype_or_input, fmt, like_input

VERSIONS = (1, 22)


def _float_dtype(op: OnnxOp, et):
    if et is not None and not isinstance(et, ir.FloatType):
        op.fail(f"dtype {et} is not a floating-point type")
    return et


def _like(op: OnnxOp):
    return like_input(op, _float_dtype(op, dtype_or_input(op, "dtype")))


for _op in ("RandomUniformLike", "RandomNormalLike"):
    shape_rule(_op, *VERSIONS)(_like)
    verifier(_op, *VERSIONS)(_like)


def _fixed(op: OnnxOp):
    shape = list(op.attrs.shape or [])
    if any(d < 0 for d in shape):
        op.fail(f"attribute 'shape' {shape} has a negative dim")
    return [tensor(tuple(shape), _float_dtype(op, dtype_attr(op, "dtype", op.attrs.dtype)))]


for _op in ("RandomUniform", "RandomNormal"):
    shape_rule(_op, *VERSIONS)(_fixed)
    verifier(_op, *VERSIONS)(_fixed)


@shape_rule("Bernoulli", 15, 22)
def _bernoulli(op: OnnxOp):
    return like_input(op, dtype_or_input(op, "dtype"))


verifier("Bernoulli", 15, 22)(_bernoulli)


@shape_rule("Multinomial", 7, 22)
def _multinomial(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None and len(x) != 2:
        op.fail(f"input has shape {fmt(x)}: expected [batch_size, class_size]")
    et = dtype_attr(op, "dtype", op.attrs.dtype)
    if not (isinstance(et, ir.IntegerType) and et.width in (32, 64)):
        op.fail(f"dtype {et} is not int32 or int64")
    n = op.attrs.sample_size
    if n is None or n < 1:
        op.fail(f"sample_size = {n}: expected >= 1")
    return [tensor((x[0] if x else None, n), et)]


verifier("Multinomial", 7, 22)(_multinomial)
