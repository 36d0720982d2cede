"""CumSum and CumProd: a generic over (result dims, source index j) that
reduces j and adds (multiplies) x[..j..] when j precedes the result index (j <= i, j < i
when exclusive, mirrored when reverse) - quadratic in the axis length but
a single structured op. An axis given at run time (an input, as in the
node tests) is range-checked and picked inside the body.
"""
from __future__ import annotations

from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (const_ints, const_np, loop_index,
                                                            norm_axis, scalar_of, to_index)


F = arith.CmpFPredicate
I = arith.CmpIPredicate


@lowering("CumSum", 11, 14)
def lower_cumsum(op: OnnxOp, b: LoweringContext):
    return _lower_cumulative(op, b, product=False)


@lowering("CumProd", 26)
def lower_cumprod(op: OnnxOp, b: LoweringContext):
    return _lower_cumulative(op, b, product=True)


def _lower_cumulative(op: OnnxOp, b: LoweringContext, product: bool):
    x = op.input(0)
    r = b.ranked(op, x).rank
    excl, rev = op.attrs.exclusive == 1, op.attrs.reverse == 1
    et = x.type.element_type
    fl = is_float(et)
    dims = b.dims(x)
    pred = {(False, False): I.ule, (True, False): I.ult,
            (False, True): I.uge, (True, True): I.ugt}[(excl, rev)]

    def combine(acc, v):
        if product:
            return arith.mulf(acc, v) if fl else arith.muli(acc, v)
        return arith.addf(acc, v) if fl else arith.addi(acc, v)
    unit = 1 if product else 0
    init = b.full(dims, et, float(unit) if fl else unit)
    its = ["parallel"] * r + ["reduction"]
    if const_np(op.input(1)) is None:
        return [_runtime_axis(op, b, x, init, its, pred, combine)]
    ax = const_ints(op, op.input(1), "axis")
    if len(ax) != 1:
        op.fail("axis must hold one value")
    axis = norm_axis(op, ax[0], r)
    n = r + 1  # loop dims: result dims + j (the source index on axis)
    j = r
    in_map = affine_map(n, [j if k == axis else k for k in range(r)])
    out_map = affine_map(n, list(range(r)))

    def body(v, acc):
        take = arith.cmpi(pred, loop_index(j), loop_index(axis))
        return arith.select(take, combine(acc, v), acc)
    return [b.generic([x], [init], [in_map, out_map], its, body)[0]]


def _runtime_axis(op: OnnxOp, b: LoweringContext, x, init, its, pred, combine):
    """The axis known at run time (an input): range-checked, then the same
    generic with the axis picked in the body (x read with tensor.extract; a
    [len(axis)] tensor gives the j loop its bound)."""
    r = x.type.rank
    if r == 0:
        op.fail("input 'x' must have rank >= 1")
    a = wrap(to_index(scalar_of(b, op.input(1))))
    checks(op, b).require(D.both(D.ge(a, -r), D.lt(a, r)),
                          f"axis {{0}} is out of range [-{r}, {r - 1}]", a)
    axis = index_of(D.select(D.lt(a, 0), a + r, a))
    n_axis = tensor.dim(x, axis)
    bound = b.empty([n_axis], x.type.element_type)
    j = r

    def body(_bound, acc):
        ivs = [loop_index(k) for k in range(r)]
        jv = loop_index(j)
        idx, cur = [], ivs[0]
        for k in range(r):
            on = arith.cmpi(I.eq, axis, b.index(k))
            idx.append(arith.select(on, jv, ivs[k]))
            if k:
                cur = arith.select(on, ivs[k], cur)
        v = tensor.extract(x, idx)
        return arith.select(arith.cmpi(pred, jv, cur), combine(acc, v), acc)
    maps = [affine_map(r + 1, [j]), affine_map(r + 1, list(range(r)))]
    return b.generic([bound], [init], maps, its, body)[0]
