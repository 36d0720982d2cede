"""Integer matrix products and convolutions of quantized inputs:
MatMulInteger (numpy matmul, int32), ConvInteger (the Conv output shape,
int32), QLinearMatMul / QLinearConv (the same shapes, y_zero_point's type).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result
from onnx_mlir_py.dialects.onnx.ops.conv import conv_shape
from onnx_mlir_py.dialects.onnx.ops.gemm import matmul_shape


def _matmul_integer(op: OnnxOp):
    a, b = op.shape(op.input(0)), op.shape(op.input(1))
    shape = matmul_shape(op, a, b)
    azp, bzp = op.shape(op.input(2)), op.shape(op.input(3))
    rows = a[-2] if a is not None and len(a) >= 2 else None
    cols = b[-1] if b is not None and len(b) >= 2 else None
    if azp is not None:
        if len(azp) > 1:
            op.fail(f"input 'a_zero_point' has shape {fmt(azp)}: expected a scalar or 1-D "
                    f"(per-row) tensor, got rank {len(azp)}")
        if len(azp) == 1 and azp[0] not in (None, 1) and rows is not None and azp[0] != rows:
            op.fail(f"input 'a_zero_point' has shape {fmt(azp)}: expected 1 or {rows} "
                    f"(rows of A {fmt(a)}) elements, got {azp[0]}")
    if bzp is not None and len(bzp) == 1 and bzp[0] not in (None, 1) and cols is not None \
            and bzp[0] != cols:
        op.fail(f"input 'b_zero_point' has shape {fmt(bzp)}: expected 1 or {cols} "
                f"(columns of B {fmt(b)}) elements, got {bzp[0]}")
    return shape


@verifier("MatMulInteger", 10)
def _matmul_integer_verify(op: OnnxOp):
    _matmul_integer(op)


@shape_rule("MatMulInteger", 10)
def _matmul_integer_shape(op: OnnxOp):
    return [tensor(_matmul_integer(op), ir.IntegerType.get_signless(32))]


@verifier("QLinearMatMul", 10, 21)
def _qlmm_verify(op: OnnxOp):
    matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(3)))


@shape_rule("QLinearMatMul", 10, 21)
def _qlmm_shape(op: OnnxOp):
    et = op.elem(op.input(7))
    shape = matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(3)))
    return [tensor(shape, et) if et is not None else None]


@verifier("QLinearConv", 10)
def _qlconv_verify(op: OnnxOp):
    conv_shape(op, 0, 3, 8)


shape_rule("QLinearConv", 10)(single_result(lambda op: conv_shape(op, 0, 3, 8), elem_input=7))


@verifier("ConvInteger", 10)
def _convint_verify(op: OnnxOp):
    conv_shape(op, 0, 1, None)


@shape_rule("ConvInteger", 10)
def _convint_shape(op: OnnxOp):
    return [tensor(conv_shape(op, 0, 1, None), ir.IntegerType.get_signless(32))]
