"""Unary elementwise ops: math, activations, Clip, IsNaN/IsInf, Not.

``UNARY`` is the one table of the versions each op's rules cover (the
lowering, passes/onnx_to_linalg/unary.py, registers its bodies for these
versions): the result has the input's shape and element type (bool for
IsNaN / IsInf). Ops listed here without a lowering body (Swish) are
expanded to their ONNX function bodies before lowering.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor

# op type -> versions
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
_BOOL_RESULT = {"IsNaN", "IsInf"}


def _unary_shape(op: OnnxOp):
    x = op.input(0)
    et = ir.IntegerType.get_signless(1) if op.op_type in _BOOL_RESULT else op.elem(x)
    if et is None:
        return [None]
    return [tensor(op.shape(x), et)]


for _op, _versions in UNARY.items():
    shape_rule(_op, *_versions)(_unary_shape)
