"""Binary and variadic elementwise ops -> one linalg.generic each with numpy
broadcasting (broadcast.py): arithmetic, Pow, PRelu, Mod (fmod 0: Python
``%``; fmod 1: C ``fmod``), BitShift, Bitwise*, Max/Min/Sum/Mean, the
comparisons and And/Or/Xor, and Where. (Unary ones: unary.py.)

Table driven: ``BINARY`` / ``VARIADIC`` map an op type to its scalar body
``body(b, op, unsigned, x, y)``, ``COMPARE`` to its predicates, ``LOGICAL`` to
its arith op. The versions each covers are the dialect's table
(``dialects/onnx/ops/elementwise.py``), the one table of versions: a new
binary op is a row there and a body + row here.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.elementwise import BINARY as BINARY_VERSIONS
from onnx_mlir_py.dialects.onnx.ops.elementwise import COMPARE as COMPARE_VERSIONS
from onnx_mlir_py.dialects.onnx.ops.elementwise import WHERE
from onnx_mlir_py.passes.onnx_to_linalg import int_division
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, convert_scalar, elem_of,
                                                        is_float)

F = arith.CmpFPredicate
I = arith.CmpIPredicate


def _c(x, et):
    return LoweringContext.const(x, et)


# -- scalar bodies ----------------------------------------------------------------
def _arith(fop, iop, uop=None):
    def f(b, op, uns, x, y):
        if is_float(x.type):
            return fop(x, y)
        if iop is None:
            op.fail(f"integer inputs are not supported")
        return (uop or iop)(x, y) if uns else iop(x, y)
    return f


def _pow(b, op, uns, x, y):
    et = x.type
    if is_float(et):
        if y.type != et:
            y = convert_scalar(y, False, et)
        return math.powf(x, y)
    f64 = ir.F64Type.get()
    xf = convert_scalar(x, uns, f64)
    yf = convert_scalar(y, False, f64) if not is_float(y.type) else convert_scalar(y, False, f64)
    return convert_scalar(math.powf(xf, yf), False, et, uns)


def _prelu(b, op, uns, x, s):
    if is_float(x.type):
        neg = arith.cmpf(F.OLT, x, _c(0.0, x.type))
    else:
        neg = arith.cmpi(I.slt, x, _c(0, x.type))
    return arith.select(neg, (arith.mulf if is_float(x.type) else arith.muli)(x, s), x)


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


BINARY = {
    "Add": _arith(arith.addf, arith.addi),
    "Sub": _arith(arith.subf, arith.subi),
    "Mul": _arith(arith.mulf, arith.muli),
    "Div": _arith(arith.divf, lambda x, y: int_division.div(x, y, False),
                  lambda x, y: int_division.div(x, y, True)),
    "Pow": _pow,
    "PRelu": _prelu,
    "Mod": _mod,
    "BitShift": _bitshift,
    "BitwiseAnd": _bitwise(arith.andi),
    "BitwiseOr": _bitwise(arith.ori),
    "BitwiseXor": _bitwise(arith.xori),
}
# variadic: folded left to right
VARIADIC = {
    "Max": _arith(arith.maximumf, arith.maxsi, arith.maxui),
    "Min": _arith(arith.minimumf, arith.minsi, arith.minui),
    "Sum": _arith(arith.addf, arith.addi),
    "Mean": _arith(arith.addf, None),
}
COMPARE = {  # op: (float predicate, signed, unsigned)
    "Equal": (F.OEQ, I.eq, I.eq),
    "Less": (F.OLT, I.slt, I.ult),
    "Greater": (F.OGT, I.sgt, I.ugt),
    "LessOrEqual": (F.OLE, I.sle, I.ule),
    "GreaterOrEqual": (F.OGE, I.sge, I.uge),
}
LOGICAL = {"And": arith.andi, "Or": arith.ori, "Xor": arith.xori}


# -- rules ------------------------------------------------------------------------
def _binary_rule(fn):
    def rule(op: OnnxOp, b: LoweringContext):
        a, c = op.input(0), op.input(1)
        uns = b.unsigned(a)
        if op.op_type in ("Div", "Mod") and not is_float(elem_of(c.type)):
            int_division.require_nonzero(op, b, c)
        return [broadcast_generic(op, b, [a, c], lambda x, y: fn(b, op, uns, x, y))]
    return rule


def _variadic_rule(name, fn):
    def rule(op: OnnxOp, b: LoweringContext):
        ins = op.variadic()
        uns = b.unsigned(ins[0])

        def body(*xs):
            acc = xs[0]
            for y in xs[1:]:
                acc = fn(b, op, uns, acc, y)
            if name == "Mean":
                acc = arith.divf(acc, _c(float(len(xs)), acc.type))
            return acc
        return [broadcast_generic(op, b, ins, body)]
    return rule


def _compare_rule(fp, sp, up):
    def rule(op: OnnxOp, b: LoweringContext):
        a, c = op.input(0), op.input(1)
        if str(b.onnx_elem(a)) == "!onnx.string":           # Equal 19+ on strings
            from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import lower_string_equal
            return lower_string_equal(op, b)
        uns = b.unsigned(a)

        def body(x, y):
            if is_float(x.type):
                return arith.cmpf(fp, x, y)
            return arith.cmpi(up if uns else sp, x, y)
        return [broadcast_generic(op, b, [a, c], body)]
    return rule


def _logical_rule(fn):
    def rule(op: OnnxOp, b: LoweringContext):
        return [broadcast_generic(op, b, [op.input(0), op.input(1)], fn)]
    return rule


for _op, _fn in BINARY.items():
    lowering(_op, *BINARY_VERSIONS[_op])(_binary_rule(_fn))
for _op, _fn in VARIADIC.items():
    lowering(_op, *BINARY_VERSIONS[_op])(_variadic_rule(_op, _fn))
for _op, (_fp, _sp, _up) in COMPARE.items():
    lowering(_op, *COMPARE_VERSIONS[_op])(_compare_rule(_fp, _sp, _up))
for _op, _fn in LOGICAL.items():
    lowering(_op, *COMPARE_VERSIONS[_op])(_logical_rule(_fn))


@lowering("Where", *WHERE)
def lower_where(op: OnnxOp, b: LoweringContext):
    return [broadcast_generic(op, b, [op.input(0), op.input(1), op.input(2)],
                              lambda c, x, y: arith.select(c, x, y))]
