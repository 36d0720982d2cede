"""Broadcasting elementwise ops: binary / variadic arithmetic, comparisons,
logic, Where (unary ones: unary.py).

Table driven: each table is the one list of the schema versions whose
semantics the rules cover, shape rules here and lowerings
(passes/onnx_to_linalg/elementwise.py) alike; the result has the numpy
broadcast of all inputs' shapes.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes

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
WHERE = (9, 16)


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


for _op, _versions in BINARY.items():
    shape_rule(_op, *_versions)(_broadcast_shape)
    verifier(_op, *_versions)(_broadcast_verify)
for _op, _versions in COMPARE.items():
    shape_rule(_op, *_versions)(_compare_shape)
    verifier(_op, *_versions)(_broadcast_verify)


@shape_rule("Where", *WHERE)
def _where_shape(op: OnnxOp):
    et = op.elem(op.input(1))
    if et is None:
        return [None]
    return [tensor(broadcast_shapes(op, [op.shape(op.input(i)) for i in range(3)]), et)]


verifier("Where", *WHERE)(_broadcast_verify)
