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


_DQ_INTS = ("int8", "uint8", "int16", "uint16", "int32")


def fold_dequantize(op: OnnxOp, inputs: list):
    """DequantizeLinear of constants ``inputs`` (x, scale[, zero point]) as
    its lowering computes it (onnx_to_linalg/quantize.py), so folding
    changes no bit: ``(float(x) - float(zp)) * scale`` in f32 (f64 with an
    f64 scale), the scale per tensor, per axis or per block. Only integer x
    whose result type is the scale's; else None (left to run time, where a
    bad parameter fails with the lowering's message)."""
    import numpy as np
    x, scale = inputs[0], inputs[1]
    zp = inputs[2] if len(inputs) > 2 else None
    if x is None or scale is None or x.dtype.name not in _DQ_INTS or x.ndim == 0 \
            or scale.dtype.name not in ("float32", "float64") \
            or (zp is not None and (zp.dtype != x.dtype or zp.shape != scale.shape)):
        return None
    out = scale.dtype
    res = op.op.results[0].type
    if not isinstance(res, ir.ShapedType) or str(res.element_type) != \
            {"float32": "f32", "float64": "f64"}[out.name]:
        return None
    axis = opt_attr(op, "axis", 1)
    block = opt_attr(op, "block_size", 0)
    if not -x.ndim <= axis < x.ndim:
        return None
    axis %= x.ndim

    def fit(p):
        if block:
            if p.ndim != x.ndim or p.shape[axis] != -(-x.shape[axis] // block) or any(
                    p.shape[d] != x.shape[d] for d in range(x.ndim) if d != axis):
                return None
            return np.repeat(p, block, axis=axis).take(range(x.shape[axis]), axis=axis)
        if p.size == 1 and p.ndim <= 1:
            return p.reshape(())
        if p.ndim != 1 or p.shape[0] != x.shape[axis]:
            return None
        return p.reshape([-1 if d == axis else 1 for d in range(x.ndim)])
    s = fit(scale)
    z = None if zp is None else fit(zp)
    if s is None or (zp is not None and z is None):
        return None
    y = x.astype(out)
    if z is not None:
        y = y - z.astype(out)
    return y * s.astype(out)
