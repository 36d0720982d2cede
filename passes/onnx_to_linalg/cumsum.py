"""ArgMax/ArgMin and CumSum.

ArgMax/ArgMin: one linalg.generic reduction with two outputs (best value,
int64 index); ``select_last_index`` turns the strict comparison into a
non-strict one. NaN as in onnxruntime: a scan that starts from the first
element and takes a later one only if it compares better, so a NaN is
picked only in first place (onnx.reference, i.e. numpy, picks the first NaN). CumSum: a generic over (result dims, source index j) that
reduces j and adds x[..j..] when j precedes the result index (j <= i, j < i
when exclusive, mirrored when reverse) - quadratic in the axis length but
a single structured op.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float, lowest
from onnx_mlir_py.passes.onnx_to_linalg.reduction import highest
from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_ints, loop_index, norm_axis

F = arith.CmpFPredicate
I = arith.CmpIPredicate


def _arg(op: OnnxOp, b: LoweringContext, is_max: bool):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r == 0:
        op.fail("input must have rank >= 1")
    axis = norm_axis(op, op.attrs.axis, r)
    last = op.version >= 12 and op.attrs.select_last_index == 1
    et = x.type.element_type
    i64 = ir.IntegerType.get_signless(64)
    dims = b.dims(x)
    keep = [k for k in range(r) if k != axis]
    kd = [dims[k] for k in keep]
    fl = is_float(et)
    if not fl and et.width == 1:
        op.fail("bool input is not supported")
    uns = b.unsigned(x)
    init_v = b.full(kd, et, (0 if uns else lowest(et)) if is_max else highest(et, uns))
    init_i = b.full(kd, i64, 0)
    if fl:
        pred = (F.OGE if last else F.OGT) if is_max else (F.OLE if last else F.OLT)
    elif uns:
        pred = (I.uge if last else I.ugt) if is_max else (I.ule if last else I.ult)
    else:
        pred = (I.sge if last else I.sgt) if is_max else (I.sle if last else I.slt)

    def body(v, best, bi):
        better = arith.cmpf(pred, v, best) if fl else arith.cmpi(pred, v, best)
        idx = arith.index_cast(i64, loop_index(axis))
        if fl:  # the first element is always taken (even a NaN)
            better = arith.ori(better, arith.cmpi(I.eq, idx, b.const(0, i64)))
        return [arith.select(better, v, best), arith.select(better, idx, bi)]
    its = ["reduction" if k == axis else "parallel" for k in range(r)]
    part = affine_map(r, keep)
    _, y = b.generic([x], [init_v, init_i], [affine_map(r, list(range(r))), part, part],
                     its, body)
    if op.attrs.keepdims:
        y = reshape_to(op, b, y, [1 if k == axis else dims[k] for k in range(r)])
    return [y]


for _v in (1, 11, 12, 13):
    lowering("ArgMax", _v)(lambda op, b: _arg(op, b, True))
    lowering("ArgMin", _v)(lambda op, b: _arg(op, b, False))


@lowering("CumSum", 11, 14)
def lower_cumsum(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    ax = const_ints(op, op.input(1), "axis")
    if len(ax) != 1:
        op.fail("axis must hold one value")
    axis = norm_axis(op, ax[0], r)
    excl, rev = op.attrs.exclusive == 1, op.attrs.reverse == 1
    et = x.type.element_type
    fl = is_float(et)
    dims = b.dims(x)
    n = r + 1  # loop dims: result dims + j (the source index on axis)
    j = r
    in_map = affine_map(n, [j if k == axis else k for k in range(r)])
    out_map = affine_map(n, list(range(r)))
    pred = {(False, False): I.ule, (True, False): I.ult,
            (False, True): I.uge, (True, True): I.ugt}[(excl, rev)]

    def body(v, acc):
        take = arith.cmpi(pred, loop_index(j), loop_index(axis))
        add = arith.addf(acc, v) if fl else arith.addi(acc, v)
        return arith.select(take, add, acc)
    init = b.full(dims, et, 0.0 if fl else 0)
    its = ["parallel"] * r + ["reduction"]
    return [b.generic([x], [init], [in_map, out_map], its, body)[0]]
