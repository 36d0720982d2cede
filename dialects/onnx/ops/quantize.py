"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
(QLinearMatMul, QLinearConv, ConvInteger, MatMulInteger: integer_ops.py).

* QuantizeLinear: y has x's shape; its type is ``output_dtype`` when set
  (v21+), else the zero point's type, else uint8.
* DequantizeLinear: y has x's shape; float32 up to v13, the scale's type
  since v19 (``output_dtype`` when set, v23+).
* DynamicQuantizeLinear: uint8 y (x's shape), scalar float scale, scalar
  uint8 zero point.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.conv import opt_attr

Q = (10, 13, 19, 21, 23, 24, 25, 28)
DQ = (10, 13, 19, 21, 23, 24, 25, 28)


def _dtype_attr(op: OnnxOp) -> ir.Type | None:
    code = opt_attr(op, "output_dtype", 0)
    if not code:
        return None
    from onnx_mlir_py.dialects.onnx.ops.common import dtype_attr
    return dtype_attr(op, "output_dtype", code)


def _check_scale(op: OnnxOp, x_i: int, s_i: int, z_i: int | None):
    x, s = op.shape(op.input(x_i)), op.shape(op.input(s_i))
    z = op.shape(op.input(z_i)) if z_i is not None else None
    if s is not None and z is not None and len(s) == len(z):
        for a, b in zip(s, z):
            if a is not None and b is not None and a != b:
                op.fail(f"scale has shape {fmt(s)} but zero point has {fmt(z)}: "
                        f"expected equal shapes")
    if x is None or s is None or len(s) != 1 or s[0] is None or s[0] == 1:
        return
    if opt_attr(op, "block_size", 0):
        return
    axis = opt_attr(op, "axis", 1)
    if not -len(x) <= axis < len(x):
        op.fail(f"axis {axis} is out of range for input rank {len(x)}")
    d = x[axis]
    if d is not None and d != s[0]:
        op.fail(f"scale has {s[0]} elements but input dim {axis} (axis) is {d}")


@verifier("QuantizeLinear", *Q)
@verifier("DequantizeLinear", *DQ)
def _q_verify(op: OnnxOp):
    _check_scale(op, 0, 1, 2)


@shape_rule("QuantizeLinear", *Q)
def _q_shape(op: OnnxOp):
    et = _dtype_attr(op)
    if et is None and op.input(2) is not None:
        et = op.elem(op.input(2))
    if et is None and op.input(2) is None:
        et = ir.IntegerType.get_unsigned(8)
    return [tensor(op.shape(op.input(0)), et) if et is not None else None]


@shape_rule("DequantizeLinear", *DQ)
def _dq_shape(op: OnnxOp):
    et = _dtype_attr(op)
    if et is None:
        et = ir.F32Type.get() if op.version < 19 else op.elem(op.input(1))
    return [tensor(op.shape(op.input(0)), et) if et is not None else None]


@shape_rule("DynamicQuantizeLinear", 11)
def _dql_shape(op: OnnxOp):
    u8 = ir.IntegerType.get_unsigned(8)
    return [tensor(op.shape(op.input(0)), u8), tensor((), ir.F32Type.get()), tensor((), u8)]
