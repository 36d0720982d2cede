"""Integer Div and Mod without a signal: x86 traps (SIGFPE) on a division by
zero and on ``INT_MIN / -1``, which killed the process.

A zero divisor is an error naming the node, as in onnxruntime: one
sequential pass over the divisor before the kernel (a constant divisor is
looked at when compiling), ``require_nonzero``. Inside the kernel the divisor
is made safe (``div``/``rem``): ``-1`` divides as ``0 - x`` (wrapping, so
``INT_MIN / -1`` is ``INT_MIN`` and ``INT_MIN % -1`` is 0, as two's
complement arithmetic gives) and a zero (only reached with the checks off)
as 1. The selects cost nothing next to the scalar divisions themselves (x86
has no vector integer division).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np

_I = arith.CmpIPredicate


def require_nonzero(op, b: LoweringContext, y: ir.Value, what: str = "divisor") -> None:
    """Every element of the integer tensor ``y`` is non-zero, else the call
    fails: "node 'n' (Div): integer division by zero (an element of the
    divisor is 0)"."""
    msg = f"node '{op.name}' ({op.op_type}): integer division by zero (an element of the " \
          f"{what} is 0)"
    c = const_np(y)
    if c is not None:
        if c.size and not c.all():
            # as onnxruntime: every run fails (the model may be loaded)
            b.require(arith.constant(ir.IntegerType.get_signless(1), 0), msg)
        return
    if not b.runtime_checks:
        return
    i1 = ir.IntegerType.get_signless(1)
    et = y.type.element_type
    zero = arith.constant(et, 0)

    def body(ivs, carried):
        from mlir.dialects import tensor
        v = tensor.extract(y, list(ivs))
        return [arith.ori(carried[0], arith.cmpi(_I.eq, v, zero))]
    (any_zero,) = for_nest(b, b.dims(y), [arith.constant(i1, 0)], body)
    b.require(arith.xori(any_zero, arith.constant(i1, 1)), msg)


def _safe(y: ir.Value, signed: bool):
    """(divisor with 0 and -1 replaced by 1, ``y == -1`` or None)."""
    et = y.type
    one = arith.constant(et, 1)
    bad = arith.cmpi(_I.eq, y, arith.constant(et, 0))
    m1 = None
    if signed and et.width > 1:
        m1 = arith.cmpi(_I.eq, y, arith.constant(et, -1))
        bad = arith.ori(bad, m1)
    return arith.select(bad, one, y), m1


def div(x: ir.Value, y: ir.Value, unsigned: bool) -> ir.Value:
    """x / y truncated (ONNX integer Div), never trapping."""
    ys, m1 = _safe(y, not unsigned)
    if unsigned:
        return arith.divui(x, ys)
    q = arith.divsi(x, ys)
    return arith.select(m1, arith.subi(arith.constant(x.type, 0), x), q) if m1 is not None else q


def rem(x: ir.Value, y: ir.Value, unsigned: bool) -> ir.Value:
    """x % y with the sign of x (C's %), never trapping (x % -1 is 0)."""
    ys, _m1 = _safe(y, not unsigned)
    return arith.remui(x, ys) if unsigned else arith.remsi(x, ys)
