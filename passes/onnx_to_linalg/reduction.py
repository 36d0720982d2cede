"""Reduce* -> one linalg.generic reduction (plus a finishing elementwise
generic for Mean/L2/LogSum/LogSumExp), keepdims via tensor.expand_shape.

ArgMax/ArgMin: one linalg.generic reduction with two outputs (best value,
int64 index); ``select_last_index`` turns the strict comparison into a
non-strict one. NaN as in onnxruntime: a scan that starts from the first
element and takes a later one only if it compares better, so a NaN is
picked only in first place (onnx.reference, i.e. numpy, picks the first NaN).

Axes come from the attribute (ReduceSum <= v11, the others <= v13) or the
constant ``axes`` input; no/empty axes reduce every dim unless
``noop_with_empty_axes`` (then only the reduction step is the identity: the
elementwise steps still apply, ReduceSumSquare is x*x, ReduceL1 |x|, ReduceL2
sqrt(x*x), ReduceLogSum log(x); ReduceLogSumExp is x as in onnxruntime).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.ops.reduction import REDUCE
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        is_float, lowest)
from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to
from onnx_mlir_py.passes.onnx_to_linalg import dims_ir
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (const_ints, const_np, imul, is_empty,
                                                            loop_index, norm_axis)

F = arith.CmpFPredicate
I = arith.CmpIPredicate


def highest(et: ir.Type, uns: bool = False):
    if is_float(et):
        return float("inf")
    if et.width == 1:
        return 1
    return (1 << (et.width - (0 if uns else 1))) - 1


def _lowest(et: ir.Type, uns: bool):
    """Identity of Max (bool and unsigned: 0)."""
    return 0 if not is_float(et) and (uns or et.width == 1) else lowest(et)


def _add(x, y):
    return arith.addf(x, y) if is_float(x.type) else arith.addi(x, y)


def _mul(x, y):
    return arith.mulf(x, y) if is_float(x.type) else arith.muli(x, y)


def _abs(x, uns=False):
    return math.absf(x) if is_float(x.type) else x if uns else math.absi(x)


# the larger / smaller of two values: float (NaN wins), i1, unsigned, signed
_MAX = (arith.maximumf, arith.ori, arith.maxui, arith.maxsi)
_MIN = (arith.minimumf, arith.andi, arith.minui, arith.minsi)


def _pick(ops, x, y, uns=False):
    f, i1, u, s = ops
    fn = f if is_float(x.type) else i1 if x.type.width == 1 else u if uns else s
    return fn(x, y)


def _max(x, y, uns=False):
    return _pick(_MAX, x, y, uns)


def _min(x, y, uns=False):
    return _pick(_MIN, x, y, uns)


def reduce_dims(op: OnnxOp, b: LoweringContext, x, red: list[int], init, combine,
                pre=None) -> ir.Value:
    """Reduce ``red`` dims of x (result has the kept dims): acc = combine(acc, pre(v))."""
    r = x.type.rank
    et = x.type.element_type
    dims = b.dims(x)
    keep = [k for k in range(r) if k not in red]
    acc = b.full([dims[k] for k in keep], et, init)
    its = ["reduction" if k in red else "parallel" for k in range(r)]
    return b.generic([x], [acc], [affine_map(r, list(range(r))), affine_map(r, keep)], its,
                     lambda v, a: combine(a, pre(v) if pre else v))[0]


def map_scalar(b: LoweringContext, x, fn) -> ir.Value:
    return b.map_elementwise([x], b.dims(x), x.type.element_type, fn)


def _count(b: LoweringContext, x, red: list[int]):
    n = 1
    for k in red:
        n = imul(b, n, b.dim(x, k))
    return n


def _axes(op: OnnxOp, axes_input: bool, r: int):
    """Normalised axes to reduce, or None for the identity (noop)."""
    if axes_input:
        v = op.input(1)
        # a statically empty 'axes' (shape [0]) is empty whether or not it is a constant
        axes = [] if v is None or is_empty(v) else const_ints(op, v, "axes")
        if not axes and op.attrs.noop_with_empty_axes:
            return None
    else:
        axes = op.attrs.axes or []
    if not axes:
        return list(range(r))
    out = sorted({norm_axis(op, a, r, "axes") for a in axes})
    if len(out) != len(axes):
        op.fail(f"axes {axes} has duplicates")
    return out


def _lse(b: LoweringContext, x, red: list[int]) -> ir.Value:
    """max-shifted: log(sum(exp(x - m))) + m"""
    r = x.type.rank
    et = x.type.element_type
    m = reduce_dims(None, b, x, red, lowest(et), _max)
    keep = [k for k in range(r) if k not in red]
    dims = b.dims(x)
    full = affine_map(r, list(range(r)))
    part = affine_map(r, keep)
    its = ["reduction" if k in red else "parallel" for k in range(r)]
    s = b.generic([x, m], [b.full([dims[k] for k in keep], et, 0.0)], [full, part, part],
                  its, lambda v, mv, a: arith.addf(a, math.exp(arith.subf(v, mv))))[0]

    def fin(sv, mv, _o):
        # an all -inf row keeps max -inf (log(sum exp(-inf - -inf)) would be nan)
        ok = arith.cmpf(arith.CmpFPredicate.ONE, mv, b.const(float("-inf"), et))
        return arith.select(ok, arith.addf(math.log(sv), mv), mv)
    n = len(keep)
    ident = affine_map(n, list(range(n)))
    return b.generic([s, m], [b.empty([dims[k] for k in keep], et)], [ident] * 3,
                     ["parallel"] * n, fin)[0]


def _div_count(b: LoweringContext, s, n, uns: bool = False):
    et = s.type.element_type
    fl = is_float(et)
    # an empty reduction sums to 0: 0 / max(n, 1) (an integer 0 / 0 is SIGFPE)
    if isinstance(n, int):
        c = b.const(n if fl else max(n, 1), et)
    else:
        n = n if fl else arith.maxsi(n, b.index(1))
        ci = arith.index_cast(ir.IntegerType.get_signless(64), n)
        c = arith.sitofp(et, ci) if fl else arith.trunci(et, ci) \
            if et.width < 64 else ci
    div = arith.divf if fl else arith.divui if uns else arith.divsi
    return map_scalar(b, s, lambda v: div(v, c))


def _pre(uns: bool) -> dict:
    return {"SumSquare": lambda v: _mul(v, v), "L2": lambda v: _mul(v, v),
            "L1": lambda v: _abs(v, uns)}


def _noop(uns: bool) -> dict:
    return {"SumSquare": lambda v: _mul(v, v), "L2": lambda v: math.sqrt(_mul(v, v)),
            "L1": lambda v: _abs(v, uns), "LogSum": math.log}


def _combines(et: ir.Type, uns: bool) -> dict:
    """kind -> (init, combine) of the plain reductions (unsigned-aware)."""
    return {"Max": (_lowest(et, uns), lambda a, v: _max(a, v, uns)),
            "Min": (highest(et, uns), lambda a, v: _min(a, v, uns)),
            "Prod": (1.0 if is_float(et) else 1, _mul)}


def _compute_type(et: ir.Type, kind: str):
    """The element type the reduction computes in, or None for ``et`` itself.
    f16 / bf16 sums and products accumulate in f32 (as onnxruntime does):
    in f16 a sum of [60000, 10000, -60000] overflowed to inf (fuzz s2000-575).
    Integer L2 / LogSum / LogSumExp compute in f64, as onnxruntime does for
    int32/int64 (a sum of squares past 2^31 does not wrap) and the opset-18
    function body of ReduceLogSumExp does (Cast to double); ``_narrow``
    truncates toward zero and saturates (docstring of ``_to_int``)."""
    if is_float(et):
        return ir.F32Type.get() if et.width < 32 and kind not in ("Max", "Min") else None
    return ir.F64Type.get() if kind in ("L2", "LogSum", "LogSumExp") else None


def _widen(b: LoweringContext, x, wt: ir.Type):
    uns = b.unsigned(x)
    return b.map_elementwise([x], b.dims(x), wt, lambda v: convert_scalar(v, uns, wt))


def _to_int(v, et: ir.Type, uns: bool):
    """f64 -> integer ``et`` as onnxruntime's integer L2/LogSum/LogSumExp
    (1.32, x86): truncation toward zero, saturation at the type's range, NaN
    (log of a negative sum) the type's lowest value like -inf (log 0); for
    unsigned types that lowest value is 0."""
    f = v.type
    w = et.width
    lo, top = (0, 1 << w) if uns else (-(1 << (w - 1)), 1 << (w - 1))
    small = arith.cmpf(F.ULT, v, arith.constant(f, float(lo)))   # below range or NaN
    big = arith.cmpf(F.OGE, v, arith.constant(f, float(top)))
    safe = arith.select(arith.ori(small, big), arith.constant(f, 0.0), v)
    y = arith.fptoui(et, safe) if uns else arith.fptosi(et, safe)
    y = arith.select(small, arith.constant(et, lo), y)
    # all ones is the unsigned maximum (2^64 - 1 does not fit an i64 attribute)
    return arith.select(big, arith.constant(et, -1 if uns else top - 1), y)


def _narrow(b: LoweringContext, y, et: ir.Type, uns: bool = False):
    if is_float(et):
        return b.map_elementwise([y], b.dims(y), et, lambda v: arith.truncf(et, v))
    return b.map_elementwise([y], b.dims(y), et, lambda v: _to_int(v, et, uns))


def _reduce_run_time_axes(op: OnnxOp, b: LoweringContext, x, kind: str):
    """axes known only at run time (reduction_axes.py)."""
    from onnx_mlir_py.passes.onnx_to_linalg import reduction_axes as RA
    r = x.type.rank
    et = x.type.element_type
    mask = RA.axes_mask(op, b, op.input(1), r)
    uns = b.unsigned(x)
    wt = _compute_type(et, kind)
    if wt is not None:
        x, et = _widen(b, x, wt), wt
    if kind in _pre(uns):
        x = map_scalar(b, x, _pre(uns)[kind])
    if kind == "LogSumExp":
        def one(y, k):
            return _lse(b, y, [k])
    else:
        init, comb = _combines(et, uns).get(kind, (0, _add))

        def one(y, k):
            return reduce_dims(op, b, y, [k], init, comb)
    y = RA.reduce_masked(op, b, x, mask, one)
    if kind == "L2":
        y = map_scalar(b, y, math.sqrt)
    elif kind == "LogSum":
        y = map_scalar(b, y, math.log)
    elif kind == "Mean":
        y = _div_count(b, y, RA.count(b, x, mask), uns)
    if wt is not None:
        y = _narrow(b, y, op.input(0).type.element_type, uns)
    if not op.attrs.keepdims:
        return RA.drop_reduced(op, b, y, mask)
    t = b.result_type(op)
    if t.rank != r:
        op.fail(f"keepdims result rank {t.rank} differs from input rank {r}")
    out = dims_ir.fit_result(op, b, b.ixdims(y))
    return reshape_to(op, b, y, out, proven=False)


def _reduce(op: OnnxOp, b: LoweringContext, axes_input: bool):
    x = op.input(0)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    kind = op.op_type[len("Reduce"):]
    if axes_input and op.input(1) is not None and not is_empty(op.input(1)) and \
            const_np(op.input(1)) is None:
        return [_reduce_run_time_axes(op, b, x, kind)]
    uns = b.unsigned(x)
    red = _axes(op, axes_input, r)
    wt = _compute_type(et, kind)
    if red is None:  # reduction over no axes: the elementwise steps only
        noop = _noop(uns)
        if kind not in noop:
            return [x]
        if wt is None or is_float(et):
            return [map_scalar(b, x, noop[kind])]
        return [_narrow(b, map_scalar(b, _widen(b, x, wt), noop[kind]), et, uns)]
    if wt is not None:
        x = _widen(b, x, wt)
    if kind == "Sum":
        y = reduce_dims(op, b, x, red, 0, _add)
    elif kind == "SumSquare":
        y = reduce_dims(op, b, x, red, 0, _add, lambda v: _mul(v, v))
    elif kind == "L1":
        y = reduce_dims(op, b, x, red, 0, _add, lambda v: _abs(v, uns))
    elif kind == "L2":
        y = reduce_dims(op, b, x, red, 0, _add, lambda v: _mul(v, v))
        y = map_scalar(b, y, math.sqrt)
    elif kind == "LogSum":
        y = map_scalar(b, reduce_dims(op, b, x, red, 0, _add), math.log)
    elif kind == "LogSumExp":
        y = _lse(b, x, red)
    elif kind in ("Max", "Min", "Prod"):
        y = reduce_dims(op, b, x, red, *_combines(x.type.element_type, uns)[kind])
    elif kind == "Mean":
        y = _div_count(b, reduce_dims(op, b, x, red, 0, _add), _count(b, x, red), uns)
    else:  # pragma: no cover - table above is exhaustive
        op.fail(f"unknown reduction {op.op_type}")
    if wt is not None:
        y = _narrow(b, y, et, uns)
    if op.attrs.keepdims:
        t = b.result_type(op)
        dims = b.dims(x)
        out = [1 if k in red else dims[k] for k in range(r)]
        if t.rank != r:
            op.fail(f"keepdims result rank {t.rank} differs from input rank {r}")
        y = reshape_to(op, b, y, out)
    return [y]


def _register(op_type, attr_vs, input_vs):
    lowering(op_type, *attr_vs)(lambda op, b: _reduce(op, b, False))
    lowering(op_type, *input_vs)(lambda op, b: _reduce(op, b, True))


for _t, (_a, _i) in REDUCE.items():
    _register(_t, _a, _i)


# -- ArgMax / ArgMin -------------------------------------------------------------
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
