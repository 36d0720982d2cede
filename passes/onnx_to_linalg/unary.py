"""More elementwise ops -> linalg.generic (broadcasting as in elementwise.py).

Trigonometric / hyperbolic (math dialect), activation functions (Selu, Elu,
Celu, ThresholdedRelu, Mish, Shrink, Softsign), Sign, Round (half to even),
IsNaN, IsInf, Mod (fmod 0: Python ``%``; fmod 1: C ``fmod``), BitShift,
Bitwise*, Clip v1/v6 (attribute bounds), and the legacy
(v1) versions of ops whose bodies live in elementwise.py.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg import int_division
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, convert_scalar, is_float
from onnx_mlir_py.passes.onnx_to_linalg.elementwise import (UNARY, _binary_rule, _c, _float_only,
                                                            _unary_rule, broadcast_generic)


F = arith.CmpFPredicate
I = arith.CmpIPredicate


def _selu(op, x):
    et = x.type
    a, g = op.attrs.alpha, op.attrs.gamma
    neg = arith.mulf(_c(a, et), arith.subf(math.exp(x), _c(1.0, et)))
    pos = arith.cmpf(F.OGT, x, _c(0.0, et))
    return arith.mulf(_c(g, et), arith.select(pos, x, neg))


def _elu(op, x):
    et = x.type
    neg = arith.mulf(_c(op.attrs.alpha, et), arith.subf(math.exp(x), _c(1.0, et)))
    return arith.select(arith.cmpf(F.OLT, x, _c(0.0, et)), neg, x)


def _celu(op, x):
    et = x.type
    a = _c(op.attrs.alpha, et)
    em1 = arith.subf(math.exp(arith.divf(x, a)), _c(1.0, et))
    zero = _c(0.0, et)
    return arith.addf(arith.maximumf(x, zero), arith.minimumf(zero, arith.mulf(a, em1)))


def _thresholded_relu(op, x):
    keep = arith.cmpf(F.OGT, x, _c(op.attrs.alpha, x.type))
    return arith.select(keep, x, _c(0.0, x.type))


def _softplus(x):
    # log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))
    return arith.addf(arith.maximumf(x, _c(0.0, x.type)),
                      math.log1p(math.exp(arith.negf(math.absf(x)))))


def _mish(op, x):
    return arith.mulf(x, math.tanh(_softplus(x)))


def _softsign(op, x):
    return arith.divf(x, arith.addf(_c(1.0, x.type), math.absf(x)))


def _shrink(op, uns, x):
    et = x.type
    lam, bias = op.attrs.lambd, op.attrs.bias
    if is_float(et):
        lo = arith.cmpf(F.OLT, x, _c(-lam, et))
        hi = arith.cmpf(F.OGT, x, _c(lam, et))
        return arith.select(lo, arith.addf(x, _c(bias, et)),
                            arith.select(hi, arith.subf(x, _c(bias, et)), _c(0.0, et)))
    f64 = ir.F64Type.get()
    xf = convert_scalar(x, uns, f64)
    lo = arith.cmpf(F.OLT, xf, _c(-lam, f64))
    hi = arith.cmpf(F.OGT, xf, _c(lam, f64))
    y = arith.select(lo, arith.addf(xf, _c(bias, f64)),
                     arith.select(hi, arith.subf(xf, _c(bias, f64)), _c(0.0, f64)))
    return convert_scalar(y, False, et, uns)


def _sign(op, uns, x):
    et = x.type
    if is_float(et):
        pos = arith.cmpf(F.OGT, x, _c(0.0, et))
        neg = arith.cmpf(F.OLT, x, _c(0.0, et))
        # 0 -> 0, NaN -> NaN
        return arith.select(pos, _c(1.0, et), arith.select(neg, _c(-1.0, et),
                                                           arith.mulf(x, _c(0.0, et))))
    zero = _c(0, et)
    pos = arith.cmpi(I.ugt if uns else I.sgt, x, zero)
    if uns:
        return arith.select(pos, _c(1, et), zero)
    neg = arith.cmpi(I.slt, x, zero)
    return arith.select(pos, _c(1, et), arith.select(neg, _c(-1, et), zero))


def _is_inf(op, uns, x):
    et = x.type
    if not is_float(et):
        op.fail(f"element type {et} is not supported (float only)")
    pos, neg = op.attrs.detect_positive, op.attrs.detect_negative
    r = _c(0, ir.IntegerType.get_signless(1))
    if pos:
        r = arith.ori(r, arith.cmpf(F.OEQ, x, _c(float("inf"), et)))
    if neg:
        r = arith.ori(r, arith.cmpf(F.OEQ, x, _c(float("-inf"), et)))
    return r


def _is_nan(op, uns, x):
    if not is_float(x.type):
        op.fail(f"element type {x.type} is not supported (float only)")
    return arith.cmpf(F.UNO, x, x)


def _bitwise_not(op, uns, x):
    if is_float(x.type):
        op.fail("BitwiseNot needs an integer type")
    return arith.xori(x, _c(-1, x.type))


def _math(fn):
    return _float_only(lambda op, x: fn(x))


NEW_UNARY = {
    "Sin": ((7, 22), _math(math.sin)),
    "Cos": ((7, 22), _math(math.cos)),
    "Tan": ((7, 22), _math(math.tan)),
    "Asin": ((7, 22), _math(math.asin)),
    "Acos": ((7, 22), _math(math.acos)),
    "Atan": ((7, 22), _math(math.atan)),
    "Sinh": ((9, 22), _math(math.sinh)),
    "Cosh": ((9, 22), _math(math.cosh)),
    "Asinh": ((9, 22), _math(math.asinh)),
    "Acosh": ((9, 22), _math(math.acosh)),
    "Atanh": ((9, 22), _math(math.atanh)),
    "Round": ((11, 22), _math(math.roundeven)),
    "Selu": ((1, 6, 22), _float_only(_selu)),
    "Elu": ((1, 6, 22), _float_only(_elu)),
    "Celu": ((12, 28), _float_only(_celu)),
    "ThresholdedRelu": ((10, 22), _float_only(_thresholded_relu)),
    "Mish": ((18, 22), _float_only(_mish)),
    "Softsign": ((1, 22), _float_only(_softsign)),
    "Shrink": ((9,), _shrink),
    "Sign": ((9, 13), _sign),
    "IsNaN": ((9, 13, 20), _is_nan),
    "IsInf": ((10, 20), _is_inf),
    "BitwiseNot": ((18,), _bitwise_not),
}
for _op, (_vs, _fn) in NEW_UNARY.items():
    lowering(_op, *_vs)(_unary_rule(_fn))

# versions of existing unary ops the shape rules accept but elementwise.py
# does not list (v1: legacy ``consumed_inputs`` attribute only; v22: bf16)
_EXTRA_VERSIONS = {"Abs": (1,), "Neg": (1,), "Exp": (1,), "Log": (1,), "Sqrt": (1,),
                   "Reciprocal": (1,), "Floor": (1,), "Ceil": (1,), "Sigmoid": (1,),
                   "Tanh": (1,), "Relu": (1,), "LeakyRelu": (1,), "HardSigmoid": (1, 22),
                   "HardSwish": (22,), "Softplus": (22,)}
for _op, _vs in _EXTRA_VERSIONS.items():
    lowering(_op, *_vs)(_unary_rule(UNARY[_op][1]))


# -- binary -------------------------------------------------------------------------
def _divisor_sign(r, y, et):
    """Python %: a remainder ``r`` with the dividend's sign (C fmod) made to
    take the divisor ``y``'s sign (``r + y`` where r != 0 and the signs differ)."""
    if is_float(et):
        zero = _c(0.0, et)
        nonzero = arith.cmpf(F.ONE, r, zero)
        neg, add = (lambda v: arith.cmpf(F.OLT, v, zero)), arith.addf
    else:
        zero = _c(0, et)
        nonzero = arith.cmpi(I.ne, r, zero)
        neg, add = (lambda v: arith.cmpi(I.slt, v, zero)), arith.addi
    fix = arith.andi(nonzero, arith.xori(neg(r), neg(y)))
    return arith.select(fix, add(r, y), r)


def _mod(b, op, uns, x, y):
    et = x.type
    if is_float(et):
        r = arith.remf(x, y)  # C fmod
    elif uns:
        return int_division.rem(x, y, True)
    else:
        r = int_division.rem(x, y, False)  # truncated: sign of the dividend (fmod)
    return r if op.attrs.fmod else _divisor_sign(r, y, et)


def _bitshift(b, op, uns, x, y):
    et = x.type
    if is_float(et):
        op.fail("BitShift needs an integer type")
    w = _c(et.width, et)
    zero = _c(0, et)
    # amounts outside [0, width) give the sign fill alone (0 or -1)
    out = arith.ori(arith.cmpi(I.uge, y, w), arith.cmpi(I.slt, y, zero)) if not uns \
        else arith.cmpi(I.uge, y, w)
    if op.attrs.direction == "LEFT":
        return arith.select(out, zero, arith.shli(x, y))
    if uns:
        return arith.select(out, zero, arith.shrui(x, y))
    fill = arith.select(arith.cmpi(I.slt, x, zero), _c(-1, et), zero)
    return arith.select(out, fill, arith.shrsi(x, y))


def _bitwise(fn):
    def f(b, op, uns, x, y):
        if is_float(x.type):
            op.fail("bitwise ops need integer types")
        return fn(x, y)
    return f


NEW_BINARY = {
    "Mod": ((10, 13, 28), _mod),
    "BitShift": ((11, 28), _bitshift),
    "BitwiseAnd": ((18,), _bitwise(arith.andi)),
    "BitwiseOr": ((18,), _bitwise(arith.ori)),
    "BitwiseXor": ((18,), _bitwise(arith.xori)),
}
for _op, (_vs, _fn) in NEW_BINARY.items():
    lowering(_op, *_vs)(_binary_rule(_fn))


# -- Clip v1/v6: bounds are attributes ----------------------------------------------
@lowering("Clip", 1, 6)
def lower_clip_v6(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if not is_float(b.ranked(op, x).element_type):
        op.fail("Clip v6 takes float inputs only")
    lo, hi = op.attrs.min, op.attrs.max

    def body(s):
        s = arith.maximumf(s, _c(lo, s.type))
        return arith.minimumf(s, _c(hi, s.type))
    return [broadcast_generic(op, b, [x], body)]
