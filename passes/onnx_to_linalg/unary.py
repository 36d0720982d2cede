"""Unary elementwise ops -> one linalg.generic each (broadcast.py).

Table driven: ``UNARY`` maps an op type to its scalar body
``body(op, unsigned, x)``; the versions it covers are the dialect's table
(``dialects/onnx/ops/unary.py``), the one table of versions: a new unary op
is a row there and a body + row here. Float-only bodies are wrapped in
``_float_only`` (other element types fail naming the node).

Math (exp, log, trigonometric / hyperbolic: the math dialect), activations
(Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Gelu, Softplus, Selu,
Elu, Celu, ThresholdedRelu, Mish, Shrink, Softsign), Sign, Round (half to
even), IsNaN, IsInf, Not, BitwiseNot; Clip (bounds as attributes up to v6,
as optional scalar inputs since v11) is a rule of its own.
"""
from __future__ import annotations

import math as pymath
import struct

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.unary import UNARY as VERSIONS
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, convert_scalar, is_float

F = arith.CmpFPredicate
I = arith.CmpIPredicate


def _c(x, et):
    return LoweringContext.const(x, et)


def _float_only(fn):
    def f(op, uns, x):
        if not is_float(x.type):
            op.fail(f"element type {x.type} is not supported (float only)")
        return fn(op, x)
    return f


def _sigmoid(x):
    one = _c(1.0, x.type)
    return arith.divf(one, arith.addf(one, math.exp(arith.negf(x))))


def _clamp01(x):
    return arith.minimumf(arith.maximumf(x, _c(0.0, x.type)), _c(1.0, x.type))


def _f32(v: float) -> float:
    """v rounded to float32: the constants of ONNX's function bodies (HardSwish,
    Gelu) are float attributes / tensors cast to the input type, so an f64
    HardSwish uses float32(1/6) (onnx.reference, onnxruntime's function
    inlining); f32 results are the same either way."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _gelu(op, x):
    """Gelu's function body: 0.5 x (1 + erf(x / sqrt 2)), or with the tanh
    approximation sqrt(2/pi) (x + 0.044715 x^3) (constants float32)."""
    et = x.type
    half = _c(0.5, et)
    if op.attrs.approximate == "tanh":
        inner = arith.mulf(_c(pymath.sqrt(_f32(2.0 / pymath.pi)), et),
                           arith.addf(x, arith.mulf(_c(_f32(0.044715), et),
                                                    arith.mulf(x, arith.mulf(x, x)))))
        t = math.tanh(inner)
    else:
        t = math.erf(arith.divf(x, _c(pymath.sqrt(2.0), et)))
    return arith.mulf(arith.mulf(half, x), arith.addf(_c(1.0, et), t))


def _abs(op, uns, x):
    if is_float(x.type):
        return math.absf(x)
    return x if uns else math.absi(x)


def _neg(op, uns, x):
    return arith.negf(x) if is_float(x.type) else arith.subi(_c(0, x.type), x)


def _relu(op, uns, x):
    if is_float(x.type):
        return arith.maximumf(x, _c(0.0, x.type))
    return arith.maxsi(x, _c(0, x.type))


def _leaky(op, x):
    neg = arith.cmpf(F.OLT, x, _c(0.0, x.type))
    return arith.select(neg, arith.mulf(x, _c(op.attrs.alpha, x.type)), x)


def _hard_sigmoid(op, x):
    return _clamp01(arith.addf(arith.mulf(x, _c(op.attrs.alpha, x.type)),
                               _c(op.attrs.beta, x.type)))


def _hard_swish(op, x):
    return arith.mulf(x, _clamp01(arith.addf(arith.mulf(x, _c(_f32(1.0 / 6.0), x.type)),
                                             _c(0.5, x.type))))


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


def softplus(x):
    """log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)) (x = 100
    gives 100, not inf; +-inf and NaN map as ONNX's formula does)."""
    return arith.addf(arith.maximumf(x, _c(0.0, x.type)),
                      _log1p(math.exp(arith.negf(math.absf(x)))))


def _log1p(t):
    """log(1 + t) accurate for small t (convert-math-to-llvm lowers math.log1p
    as log(1 + t): 0 for t = 2e-9 in f32): t where 1 + t rounds to 1, else
    log(u) * t / (u - 1) with u = 1 + t (Goldberg's correction)."""
    u = arith.addf(_c(1.0, t.type), t)
    exact = arith.cmpf(F.OEQ, u, _c(1.0, t.type))
    return arith.select(exact, t, arith.mulf(math.log(u),
                                             arith.divf(t, arith.subf(u, _c(1.0, t.type)))))


def _mish(op, x):
    return arith.mulf(x, math.tanh(softplus(x)))


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


UNARY = {
    "Abs": _abs,
    "Neg": _neg,
    "Relu": _relu,
    "Exp": _math(math.exp),
    "Log": _math(math.log),
    "Sqrt": _math(math.sqrt),
    "Reciprocal": _float_only(lambda op, x: arith.divf(_c(1.0, x.type), x)),
    "Floor": _math(math.floor),
    "Ceil": _math(math.ceil),
    "Sigmoid": _math(_sigmoid),
    "Tanh": _math(math.tanh),
    "Erf": _math(math.erf),
    "Sin": _math(math.sin),
    "Cos": _math(math.cos),
    "Tan": _math(math.tan),
    "Asin": _math(math.asin),
    "Acos": _math(math.acos),
    "Atan": _math(math.atan),
    "Sinh": _math(math.sinh),
    "Cosh": _math(math.cosh),
    "Asinh": _math(math.asinh),
    "Acosh": _math(math.acosh),
    "Atanh": _math(math.atanh),
    "Round": _math(math.roundeven),
    "LeakyRelu": _float_only(_leaky),
    "HardSigmoid": _float_only(_hard_sigmoid),
    "HardSwish": _float_only(_hard_swish),
    "Gelu": _float_only(_gelu),
    "Softplus": _math(softplus),
    "Selu": _float_only(_selu),
    "Elu": _float_only(_elu),
    "Celu": _float_only(_celu),
    "ThresholdedRelu": _float_only(_thresholded_relu),
    "Mish": _float_only(_mish),
    "Softsign": _float_only(_softsign),
    "Shrink": _shrink,
    "Sign": _sign,
    "IsNaN": _is_nan,
    "IsInf": _is_inf,
    "Not": lambda op, uns, x: arith.xori(x, _c(1, x.type)),
    "BitwiseNot": _bitwise_not,
}


def _unary_rule(fn):
    def rule(op: OnnxOp, b: LoweringContext):
        x = op.input(0)
        uns = b.unsigned(x)
        return [broadcast_generic(op, b, [x], lambda s: fn(op, uns, s))]
    return rule


for _op, _fn in UNARY.items():
    lowering(_op, *VERSIONS[_op])(_unary_rule(_fn))


# -- Clip --------------------------------------------------------------------------
def _clip_attribute_bounds(op: OnnxOp, b: LoweringContext):
    """Clip v1/v6: the bounds are attributes (float inputs only)."""
    x = op.input(0)
    if not is_float(b.ranked(op, x).element_type):
        op.fail("Clip v6 takes float inputs only")
    lo, hi = op.attrs.min, op.attrs.max

    def body(s):
        s = arith.maximumf(s, _c(lo, s.type))
        return arith.minimumf(s, _c(hi, s.type))
    return [broadcast_generic(op, b, [x], body)]


@lowering("Clip", *VERSIONS["Clip"])
def lower_clip(op: OnnxOp, b: LoweringContext):
    """Clip: the bounds are optional scalar inputs since v11, attributes before."""
    if op.version < 11:
        return _clip_attribute_bounds(op, b)
    x = op.input(0)
    uns = b.unsigned(x)
    lo = op.input(1)
    hi = op.input(2)
    for v in (lo, hi):
        if v is not None and (b.ranked(op, v).rank != 0):
            op.fail("min/max must be scalars (rank 0)")
    lo_s = tensor.extract(lo, []) if lo is not None else None
    hi_s = tensor.extract(hi, []) if hi is not None else None

    def body(s):
        if is_float(s.type):
            if lo_s is not None:
                s = arith.maximumf(s, lo_s)
            if hi_s is not None:
                s = arith.minimumf(s, hi_s)
        else:
            if lo_s is not None:
                s = (arith.maxui if uns else arith.maxsi)(s, lo_s)
            if hi_s is not None:
                s = (arith.minui if uns else arith.minsi)(s, hi_s)
        return s
    return [broadcast_generic(op, b, [x], body)]
