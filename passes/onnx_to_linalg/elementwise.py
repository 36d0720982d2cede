"""Elementwise ops -> linalg.generic with numpy broadcasting.

Table driven: ``BINARY``/``VARIADIC``/``UNARY``/``COMPARE`` map an op type to
(versions, scalar body). Broadcasting follows the result type: an input dim
that is statically 1 where the result's is not reads index 0; dynamic result
dims are the largest of the inputs' dims there (equal, or 1 that broadcasts);
an input whose dynamic dim turns out to be 1 at run time where the result's
is not is broadcast first, in a run-time branch (``_runtime_broadcast``).
"""
from __future__ import annotations

import math as pymath
import struct

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg import int_division
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        elem_of, is_float)


F = arith.CmpFPredicate
I = arith.CmpIPredicate


# -- broadcasting ---------------------------------------------------------------
def broadcast_dim(d: ir.Value, e: ir.Value) -> ir.Value:
    """numpy's broadcast of two run-time dims that are equal or 1: ``e`` if
    ``d`` is 1, else ``d`` (not their max: 0 against 1 is 0)."""
    one = arith.constant(ir.IndexType.get(), 1)
    return arith.select(arith.cmpi(I.eq, d, one), e, d)


def broadcast_generic(op: OnnxOp, b: LoweringContext, inputs: list[ir.Value],
                      body, out_index: int = 0) -> ir.Value:
    """linalg.generic over op's result ``out_index`` shape; body(*scalars)."""
    out_t = b.result_type(op, out_index)
    rank = out_t.rank
    for v in inputs:
        b.ranked(op, v)
        if v.type.rank > rank:
            op.fail(f"input rank {v.type.rank} exceeds result rank {rank}")

    def cands(k):
        return [(v, k - (rank - v.type.rank)) for v in inputs
                if k - (rank - v.type.rank) >= 0 and v.type.is_dynamic_dim(k - (rank - v.type.rank))]

    def dyn(k):
        for v in inputs:
            j = k - (rank - v.type.rank)
            if j >= 0 and not v.type.is_dynamic_dim(j) and v.type.shape[j] != 1:
                return int(v.type.shape[j])
        cs = cands(k)
        if not cs:
            return 1
        d = b.dim(*cs[0])
        for c in cs[1:]:
            d = broadcast_dim(d, b.dim(*c))
        return d

    dims = b.out_dims(op, out_index, dyn)
    # A dynamic input dim may be 1 at run time while the result's is not:
    # such inputs are broadcast explicitly first (a run-time branch), so the
    # generic below can index them like the result.
    sole = {k: cands(k)[0] for k in range(rank)
            if isinstance(dims[k], ir.Value) and len(cands(k)) == 1}
    _check_broadcast(op, b, inputs, dims, rank, sole)
    inputs = [_runtime_broadcast(b, v, dims, rank, sole) for v in inputs]
    maps = []
    for v in inputs:
        r = v.type.rank
        exprs = []
        for j in range(r):
            k = rank - r + j
            static_one = not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
            exprs.append("0" if static_one and dims[k] != 1 else k)
        maps.append(affine_map(rank, exprs))
    maps.append(affine_map(rank, list(range(rank))))
    init = b.empty(dims, out_t.element_type)
    return b.generic(inputs, [init], maps, ["parallel"] * rank,
                     lambda *a: body(*a[:len(inputs)]))[0]


def _check_broadcast(op: OnnxOp, b: LoweringContext, inputs: list[ir.Value], dims: list,
                     rank: int, sole: dict) -> None:
    """Run-time check that every dynamic input dim is the result's or 1
    (numpy broadcasting): ``[3, 4] + [5, 4]`` fails instead of reading past
    the first input."""
    chk = checks(op, b)
    for i, v in enumerate(inputs):
        r = v.type.rank
        for j in range(r):
            k = rank - r + j
            if not v.type.is_dynamic_dim(j) or sole.get(k) == (v, j):
                continue
            dv, do = b.ixdim(v, j), wrap(dims[k])
            chk.require(D.either(D.eq(dv, do), D.eq(dv, 1)),
                        f"input #{i} is not broadcast-compatible: its dim {j} is {{0}}, "
                        f"the other inputs need {{1}} (or 1) on that axis", dv, do)


def _runtime_broadcast(b: LoweringContext, v: ir.Value, dims: list, rank: int,
                       sole: dict) -> ir.Value:
    """``v`` broadcast at run time where a dynamic dim of it is 1 and the
    result's is not; ``sole[k] = (v, j)`` when the result dim k *is* v's dim j.
    One ``scf.if`` per operand whose then-branch copies ``v`` reading index 0
    along every dim that is 1 (a chain of one ``scf.if`` per dim made
    eliminate-empty-tensors and one-shot-bufferize exponentially slow at -O3:
    a rank-4 MatMul took 436 s to bufferize)."""
    from mlir.dialects import scf
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, loop_index
    r = v.type.rank
    js = [j for j in range(r) if v.type.is_dynamic_dim(j) and dims[rank - r + j] != 1
          and sole.get(rank - r + j) != (v, j)]
    if not js:
        return v
    one = b.as_index(1)
    is_one, need = {}, None
    for j in js:
        is_one[j] = arith.cmpi(I.eq, b.dim(v, j), one)
        nj = arith.andi(is_one[j], arith.cmpi(I.ne, b.as_index(dims[rank - r + j]), one))
        need = nj if need is None else arith.ori(need, nj)
    new_dims = b.dims(v)
    for j in js:
        new_dims[j] = dims[rank - r + j]
    if_op = scf.IfOp(need, [v.type], has_else=True)
    with ir.InsertionPoint(if_op.then_block):

        def body(_o):
            idx = [loop_index(j) for j in range(r)]
            for j in js:
                idx[j] = arith.select(is_one[j], b.index(0), idx[j])
            return tensor.extract(v, idx)
        expanded = b.generic([], [b.empty(new_dims, v.type.element_type)],
                             [affine_map(r, list(range(r)))], ["parallel"] * r, body)[0]
        scf.YieldOp([b.cast_to(expanded, v.type)])
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp([v])
    # the result's dims are new_dims either way (the else branch only runs when
    # v's dims are those, see _check_broadcast): a full slice states them, so
    # a later tensor.dim of it folds to them instead of leaving bufferization's
    # value-bounds analysis to compare the two branches (codegen/resolve_dims.py)
    return extract_slice(b, if_op.results[0], [0] * r,
                         [b.as_index(d) if isinstance(d, ir.Value) else d for d in new_dims])


# -- scalar bodies ----------------------------------------------------------------
def _c(x, et):
    return LoweringContext.const(x, et)


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


BINARY = {
    "Add": ((7, 13, 14), _arith(arith.addf, arith.addi)),
    "Sub": ((7, 13, 14), _arith(arith.subf, arith.subi)),
    "Mul": ((7, 13, 14), _arith(arith.mulf, arith.muli)),
    "Div": ((7, 13, 14), _arith(arith.divf, lambda x, y: int_division.div(x, y, False),
                                lambda x, y: int_division.div(x, y, True))),
    "Pow": ((7, 12, 13, 15), _pow),
    "PRelu": ((7, 9, 16), _prelu),
}
# variadic: folded left to right
VARIADIC = {
    "Max": ((8, 12, 13), _arith(arith.maximumf, arith.maxsi, arith.maxui)),
    "Min": ((8, 12, 13), _arith(arith.minimumf, arith.minsi, arith.minui)),
    "Sum": ((8, 13), _arith(arith.addf, arith.addi)),
    "Mean": ((8, 13), _arith(arith.addf, None)),
}
COMPARE = {  # op: (versions, float predicate, signed, unsigned) or logical op
    "Equal": ((11, 13, 19), F.OEQ, I.eq, I.eq),
    "Less": ((9, 13), F.OLT, I.slt, I.ult),
    "Greater": ((9, 13), F.OGT, I.sgt, I.ugt),
    "LessOrEqual": ((12, 16), F.OLE, I.sle, I.ule),
    "GreaterOrEqual": ((12, 16), F.OGE, I.sge, I.uge),
}
LOGICAL = {"And": ((7,), arith.andi), "Or": ((7,), arith.ori), "Xor": ((7,), arith.xori)}


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


def _float_only(fn):
    def f(op, uns, x):
        if not is_float(x.type):
            op.fail(f"element type {x.type} is not supported (float only)")
        return fn(op, x)
    return f


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


UNARY = {
    "Abs": ((6, 13), _abs),
    "Neg": ((6, 13), _neg),
    "Relu": ((6, 13, 14), _relu),
    "Exp": ((6, 13), _float_only(lambda op, x: math.exp(x))),
    "Log": ((6, 13), _float_only(lambda op, x: math.log(x))),
    "Sqrt": ((6, 13), _float_only(lambda op, x: math.sqrt(x))),
    "Reciprocal": ((6, 13), _float_only(lambda op, x: arith.divf(_c(1.0, x.type), x))),
    "Floor": ((6, 13), _float_only(lambda op, x: math.floor(x))),
    "Ceil": ((6, 13), _float_only(lambda op, x: math.ceil(x))),
    "Sigmoid": ((6, 13), _float_only(lambda op, x: _sigmoid(x))),
    "Tanh": ((6, 13), _float_only(lambda op, x: math.tanh(x))),
    "Erf": ((9, 13), _float_only(lambda op, x: math.erf(x))),
    "LeakyRelu": ((6, 16), _float_only(_leaky)),
    "HardSigmoid": ((6,), _float_only(_hard_sigmoid)),
    "HardSwish": ((14,), _float_only(_hard_swish)),
    "Gelu": ((20,), _float_only(_gelu)),
    "Softplus": ((1,), _float_only(
        lambda op, x: math.log1p(math.exp(x)))),
    "Not": ((1,), lambda op, uns, x: arith.xori(x, _c(1, x.type))),
}


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


def _unary_rule(fn):
    def rule(op: OnnxOp, b: LoweringContext):
        x = op.input(0)
        uns = b.unsigned(x)
        return [broadcast_generic(op, b, [x], lambda s: fn(op, uns, s))]
    return rule


for _op, (_vs, _fn) in BINARY.items():
    lowering(_op, *_vs)(_binary_rule(_fn))
for _op, (_vs, _fn) in VARIADIC.items():
    lowering(_op, *_vs)(_variadic_rule(_op, _fn))
for _op, (_vs, _fp, _sp, _up) in COMPARE.items():
    lowering(_op, *_vs)(_compare_rule(_fp, _sp, _up))
for _op, (_vs, _fn) in LOGICAL.items():
    lowering(_op, *_vs)(_logical_rule(_fn))
for _op, (_vs, _fn) in UNARY.items():
    lowering(_op, *_vs)(_unary_rule(_fn))


@lowering("Clip", 11, 12, 13)
def lower_clip(op: OnnxOp, b: LoweringContext):
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


@lowering("Where", 9, 16)
def lower_where(op: OnnxOp, b: LoweringContext):
    return [broadcast_generic(op, b, [op.input(0), op.input(1), op.input(2)],
                              lambda c, x, y: arith.select(c, x, y))]
