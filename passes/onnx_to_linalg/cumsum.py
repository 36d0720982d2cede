"""CumSum: a generic over (result dims, source index j) that
reduces j and adds x[..j..] when j precedes the result index (j <= i, j < i
when exclusive, mirrored when reverse) - quadratic in the axis length but
a single structured op.
"""
from __future__ import annotations

from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_ints, loop_index, norm_axis


F = arith.CmpFPredicate
I = arith.CmpIPredicate


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
