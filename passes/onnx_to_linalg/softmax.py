"""Softmax / LogSoftmax -> numerically stable max / exp-sum / divide (or
subtract log-sum) as linalg.generic ops; Hardmax -> max, first-max position
(min of the row-major index where x == max, or where x is NaN: a NaN is the
max as in onnx.reference and TopK), one-hot.

v13 reduces along ``axis``; v1/v11 coerce the input to 2-D at ``axis`` and
so reduce over all dims from ``axis`` on.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float


def softmax(op: OnnxOp, b: LoweringContext, x, red_dims: list[int], log: bool = False):
    """f16 / bf16 compute exp, the sum and the result in f32 and round once, as
    onnxruntime does (in f16 the log of a sum near 1 lost 13 ulp: LogSoftmax
    gave -0.0842 for -0.0850, which a Mod after it turned into 0.0012 for
    0.0648, fuzz s2000-1417); the max stays in the input type (exact)."""
    r = x.type.rank
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float softmax is supported")
    half = et.width < 32
    ct = ir.F32Type.get() if half else et
    up = (lambda v: arith.extf(ct, v)) if half else (lambda v: v)
    down = (lambda v: arith.truncf(et, v)) if half else (lambda v: v)
    dims = b.dims(x)
    keep = [k for k in range(r) if k not in red_dims]
    full = affine_map(r, list(range(r)))
    part = affine_map(r, keep)
    par = ["parallel"] * r
    red_it = ["reduction" if k in red_dims else "parallel" for k in range(r)]
    kdims = [dims[k] for k in keep]
    if half and not log:
        return _softmax_half(b, x, et, (full, part, par, red_it, kdims, dims))
    mx = b.generic([x], [b.full(kdims, et, float("-inf"))], [full, part], red_it,
                   lambda v, acc: arith.maximumf(acc, v))[0]
    ex = b.generic([x, mx], [b.empty(dims, ct)], [full, part, full], par,
                   lambda v, m, _o: math.exp(arith.subf(up(v), up(m))))[0]
    sm = b.generic([ex], [b.full(kdims, ct, 0.0)], [full, part], red_it,
                   lambda v, acc: arith.addf(acc, v))[0]
    if log:  # (x - max) - log(sum)
        return b.generic([x, mx, sm], [b.empty(dims, et)], [full, part, part, full], par,
                         lambda v, m, s, _o: down(arith.subf(arith.subf(up(v), up(m)),
                                                             math.log(s))))[0]
    return b.generic([ex, sm], [b.empty(dims, et)], [full, part, full], par,
                     lambda e, s, _o: down(arith.divf(e, s)))[0]


def _softmax_half(b: LoweringContext, x, et, sel) -> ir.Value:
    """f16 / bf16 Softmax rounds where onnx.reference (numpy) does: x - max,
    each exp and the (f32-accumulated) row sum to the input type, the quotient
    of those once; one ulp more exact in a probability was 2 wrong numbers
    after attention's P @ V (test_attention_4d_causal_fp16). A sum too large
    for the type keeps its f32 value."""
    ct = ir.F32Type.get()
    full, part, par, red_it, kdims, dims = sel
    rnd = lambda v: arith.extf(ct, arith.truncf(et, v))  # noqa: E731
    mx = b.generic([x], [b.full(kdims, et, float("-inf"))], [full, part], red_it,
                   lambda v, acc: arith.maximumf(acc, v))[0]
    ex = b.generic([x, mx], [b.empty(dims, ct)], [full, part, full], par,
                   lambda v, m, _o: rnd(math.exp(rnd(arith.subf(arith.extf(ct, v),
                                                                arith.extf(ct, m))))))[0]
    sm = b.generic([ex], [b.full(kdims, ct, 0.0)], [full, part], red_it,
                   lambda v, acc: arith.addf(acc, v))[0]

    def quotient(e, s, _o):
        r = rnd(s)
        big = arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(r), b.const(float("inf"), ct))
        return arith.truncf(et, arith.divf(e, arith.select(big, s, r)))
    return b.generic([ex, sm], [b.empty(dims, et)], [full, part, full], par, quotient)[0]


def hardmax(op: OnnxOp, b: LoweringContext, x, red_dims: list[int]):
    """1 at the first (row-major over red_dims) maximum, 0 elsewhere."""
    r = x.type.rank
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float hardmax is supported")
    i64 = ir.IntegerType.get_signless(64)
    dims = b.dims(x)
    keep = [k for k in range(r) if k not in red_dims]
    full = affine_map(r, list(range(r)))
    part = affine_map(r, keep)
    red_it = ["reduction" if k in red_dims else "parallel" for k in range(r)]
    kdims = [dims[k] for k in keep]
    # row-major strides of the reduced dims (index values, outside the bodies)
    strides, acc = {}, b.index(1)
    for k in reversed(red_dims):
        strides[k] = acc
        acc = arith.muli(acc, b.as_index(dims[k]))

    def lin():
        v = b.index(0)
        for k in red_dims:
            v = arith.addi(v, arith.muli(loop_index(k), strides[k]))
        return arith.index_cast(i64, v)
    mx = b.generic([x], [b.full(kdims, et, float("-inf"))], [full, part], red_it,
                   lambda v, a: arith.maximumf(a, v))[0]
    big = (1 << 63) - 1

    def first(v, m, a):  # m is NaN iff the row has a NaN (maximumf propagates it)
        hit = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, v, m),
                        arith.cmpf(arith.CmpFPredicate.UNO, v, v))
        return arith.minsi(a, arith.select(hit, lin(), b.const(big, i64)))
    pos = b.generic([x, mx], [b.full(kdims, i64, big)], [full, part, part], red_it, first)[0]
    return b.generic([pos], [b.empty(dims, et)], [part, full], ["parallel"] * r,
                     lambda p, _o: arith.select(arith.cmpi(arith.CmpIPredicate.eq, lin(), p),
                                                b.const(1.0, et), b.const(0.0, et)))[0]


def loop_index(k: int) -> ir.Value:
    return linalg.IndexOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result


def _axis(op: OnnxOp, r: int) -> int:
    a = op.attrs.axis
    a = a + r if a < 0 else a
    if not 0 <= a < r:
        op.fail(f"axis {op.attrs.axis} out of range for rank {r}")
    return a


def _rule(kernel, coerce_2d: bool, **kw):
    """v13 reduces along ``axis``; v1/v11 coerce the input to 2-D at ``axis``,
    i.e. reduce over every dim from ``axis`` on."""
    def rule(op: OnnxOp, b: LoweringContext):
        x = op.input(0)
        r = b.ranked(op, x).rank
        a = _axis(op, r)
        return [kernel(op, b, x, list(range(a, r)) if coerce_2d else [a], **kw)]
    return rule


lowering("Softmax", 13)(_rule(softmax, False))
lowering("Softmax", 1, 11)(_rule(softmax, True))
lowering("LogSoftmax", 13)(_rule(softmax, False, log=True))
lowering("LogSoftmax", 1, 11)(_rule(softmax, True, log=True))
lowering("Hardmax", 13)(_rule(hardmax, False))
lowering("Hardmax", 1, 11)(_rule(hardmax, True))
