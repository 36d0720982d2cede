"""Elementwise ops: unary math, activations, binary arithmetic/logic, Where.

Table driven: each table lists op types with the schema versions whose
semantics the rules here cover (the shape is the input's shape, or the
numpy broadcast of all inputs).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor
from .broadcast import broadcast_shapes

# op type -> versions: result has the type of input 0.
UNARY = {
    "Abs": (6, 13), "Neg": (6, 13), "Exp": (6, 13), "Log": (6, 13), "Sqrt": (6, 13),
    "Reciprocal": (6, 13), "Floor": (6, 13), "Ceil": (6, 13), "Relu": (6, 13, 14),
    "Sigmoid": (6, 13), "Tanh": (6, 13), "Erf": (9, 13), "Sin": (7,), "Cos": (7,),
    "Tan": (7,), "Asin": (7,), "Acos": (7,), "Atan": (7,), "Sinh": (9,), "Cosh": (9,),
    "Asinh": (9,), "Acosh": (9,), "Atanh": (9,), "Sign": (9, 13), "Round": (11,),
    "Softplus": (1,), "Softsign": (1,), "Elu": (6,), "Selu": (6,), "LeakyRelu": (6, 16),
    "HardSigmoid": (6,), "HardSwish": (14,), "ThresholdedRelu": (10,), "Celu": (12,),
    "Gelu": (20,), "Mish": (18,), "Not": (1,), "BitwiseNot": (18,), "Identity": (16, 19, 21, 23, 24, 25),
    "Clip": (11, 12, 13), "IsNaN": (9, 13, 20), "IsInf": (10, 20), "Shrink": (9,),
}
# op type -> versions: numpy broadcast of all inputs, type of input 0.
BINARY = {
    "Add": (7, 13, 14), "Sub": (7, 13, 14), "Mul": (7, 13, 14), "Div": (7, 13, 14),
    "Pow": (7, 12, 13, 15), "Mod": (10, 13), "PRelu": (7, 9, 16),
    "BitShift": (11,), "BitwiseAnd": (18,), "BitwiseOr": (18,), "BitwiseXor": (18,),
    "Max": (8, 12, 13), "Min": (8, 12, 13), "Sum": (8, 13), "Mean": (8, 13),
}
# op type -> versions: numpy broadcast of inputs, bool result.
COMPARE = {
    "Equal": (11, 13, 19), "Less": (9, 13), "Greater": (9, 13),
    "LessOrEqual": (12, 16), "GreaterOrEqual": (12, 16),
    "And": (7,), "Or": (7,), "Xor": (7,),
}
_BOOL_RESULT = {"IsNaN", "IsInf"}


def _unary_shape(op: OnnxOp):
    x = op.input(0)
    et = ir.IntegerType.get_signless(1) if op.op_type in _BOOL_RESULT else op.elem(x)
    if et is None:
        return [None]
    return [tensor(op.shape(x), et)]


def _broadcast_shape(op: OnnxOp):
    ins = [v for g in op.operand_groups() for v in g]
    et = op.elem(ins[0])
    if et is None:
        return [None]
    return [tensor(broadcast_shapes(op, [op.shape(v) for v in ins]), et)]


def _compare_shape(op: OnnxOp):
    ins = [v for g in op.operand_groups() for v in g]
    return [tensor(broadcast_shapes(op, [op.shape(v) for v in ins]),
                   ir.IntegerType.get_signless(1))]


def _broadcast_verify(op: OnnxOp):
    ins = [v for g in op.operand_groups() for v in g]
    broadcast_shapes(op, [op.shape(v) for v in ins])


for _op, _versions in UNARY.items():
    shape_rule(_op, *_versions)(_unary_shape)
for _op, _versions in BINARY.items():
    shape_rule(_op, *_versions)(_broadcast_shape)
    verifier(_op, *_versions)(_broadcast_verify)
for _op, _versions in COMPARE.items():
    shape_rule(_op, *_versions)(_compare_shape)
    verifier(_op, *_versions)(_broadcast_verify)


@shape_rule("Where", 9, 16)
def _where_shape(op: OnnxOp):
    et = op.elem(op.input(1))
    if et is None:
        return [None]
    return [tensor(broadcast_shapes(op, [op.shape(op.input(i)) for i in range(3)]), et)]


verifier("Where", 9, 16)(_broadcast_verify)
