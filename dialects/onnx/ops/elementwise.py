"""Elementwise ops: unary math, activations, binary arithmetic/logic, Where.

Table driven: each table lists op types with the schema versions whose
semantics the rules here cover (the shape is the input's shape, or the
numpy broadcast of all inputs).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes

# op type -> versions: result has the type of input 0.
UNARY = {
    "Abs": (1, 6, 13), "Neg": (1, 6, 13), "Exp": (1, 6, 13), "Log": (1, 6, 13),
    "Sqrt": (1, 6, 13), "Reciprocal": (1, 6, 13), "Floor": (1, 6, 13), "Ceil": (1, 6, 13),
    "Relu": (1, 6, 13, 14), "Sigmoid": (1, 6, 13), "Tanh": (1, 6, 13), "Erf": (9, 13),
    "Sin": (7, 22), "Cos": (7, 22), "Tan": (7, 22), "Asin": (7, 22), "Acos": (7, 22),
    "Atan": (7, 22), "Sinh": (9, 22), "Cosh": (9, 22), "Asinh": (9, 22), "Acosh": (9, 22),
    "Atanh": (9, 22), "Sign": (9, 13), "Round": (11, 22), "Softplus": (1, 22),
    "Softsign": (1, 22), "Elu": (1, 6, 22), "Selu": (1, 6, 22), "LeakyRelu": (1, 6, 16),
    "HardSigmoid": (1, 6, 22), "HardSwish": (14, 22), "ThresholdedRelu": (10, 22),
    "Celu": (12, 28), "Gelu": (20,), "Mish": (18, 22), "Not": (1,), "BitwiseNot": (18,),
    "Clip": (1, 6, 11, 12, 13), "IsNaN": (9, 13, 20), "IsInf": (10, 20), "Shrink": (9,),
    "Swish": (24,),
}
# op type -> versions: numpy broadcast of all inputs, type of input 0.
BINARY = {
    "Add": (7, 13, 14), "Sub": (7, 13, 14), "Mul": (7, 13, 14), "Div": (7, 13, 14),
    "Pow": (7, 12, 13, 15), "Mod": (10, 13, 28), "PRelu": (7, 9, 16),
    "BitShift": (11, 28), "BitwiseAnd": (18,), "BitwiseOr": (18,), "BitwiseXor": (18,),
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
