"""Pow of a float tensor by a constant small integer exponent -> Muls.

    Pow(x, 2) => x * x      Pow(x, 3) => (x * x) * x      Pow(x, 4) => (x * x) * (x * x)

GPT-2's tanh GELU has ``Pow(x, 3)``, which lowered to a libm ``powf`` call
per element; the Muls stay in the elementwise kernel's vector code. The
product may differ from ``powf`` by about one ulp (two roundings instead of
one); infinities, NaN and signed zeros come out as powf gives them.

Legal when the exponent is a constant of one element equal to 2, 3 or 4 and
the result has the base's type (the exponent does not broadcast it larger).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, create_op, is_constant,
                                                       lowerable_spec, module_opset, onnx_ops,
                                                       replace)

EXPONENTS = (2, 3, 4)


def _exponent(y: ir.Value) -> int | None:
    if not is_constant(y):
        return None
    v = constant_values([y])[0]
    if v is None or v.size != 1:
        return None
    e = float(v.reshape(-1)[0])
    return int(e) if e in EXPONENTS else None


def pow_to_mul(module: ir.Module) -> int:
    mul = lowerable_spec("Mul", module_opset(module))
    if mul is None:
        return 0
    count = 0
    for pw in onnx_ops(module, "Pow"):
        x, y = pw.input(0), pw.input(1)
        out = pw.op.results[0]
        if not isinstance(x.type, ir.RankedTensorType) or str(out.type) != str(x.type):
            continue
        if not isinstance(x.type.element_type, (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type)):
            continue
        e = _exponent(y)
        if e is None:
            continue
        loc = pw.op.location
        with ir.InsertionPoint(pw.op), loc:
            def times(a, b):
                return create_op(mul, [a, b], [x.type], {}, loc).results[0]
            sq = times(x, x)
            r = sq if e == 2 else times(sq, x) if e == 3 else times(sq, sq)
        replace(pw.op, r)
        count += 1
    return count
