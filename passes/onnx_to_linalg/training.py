"""Adagrad, Adam, Momentum (ai.onnx.preview.training v1): one elementwise
generic per optimized tensor, yielding X_new and its new accumulator(s).

The scalar factors of R and T (Adagrad's R / (1 + T * decay_factor), Adam's
bias-corrected R * sqrt(1 - beta^T) / (1 - alpha^T) for T > 0, Momentum's
beta or 1 at T = 0) are computed once in f64 and then rounded to the tensors'
type, as onnx.reference (numpy promotes them to f64). Attribute constants
such as 1 - alpha are computed in f32 (the attributes' type), as
onnx.reference's np.float32 attribute values, also for f64 tensors. A dynamic dim of G/V/H (or of a one-element R/T) is checked at run
time against X's (resp. 1), naming the node.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math as mmath

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.training import ROLES, TRAINING, groups
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import scalar_of

EQ = arith.CmpIPredicate.eq


def _one_element(op: OnnxOp, b: LoweringContext, v: ir.Value, name: str) -> ir.Value:
    """The element of scalar input ``name`` (dynamic dims checked == 1)."""
    t = b.ranked(op, v, f"input '{name}'")
    for k in range(t.rank):
        if t.is_dynamic_dim(k):
            d = b.dim(v, k)
            b.require(arith.cmpi(EQ, d, b.index(1)),
                      f"node '{op.name}' ({op.op_type}): input '{name}' has {{0}} elements "
                      f"in dim {k}: expected a scalar (one element)", d)
    return scalar_of(b, v)


def _same_dims(op: OnnxOp, b: LoweringContext, x: ir.Value, v: ir.Value, what: str,
               xname: str) -> None:
    for k in range(x.type.rank):
        if x.type.is_dynamic_dim(k) or v.type.is_dynamic_dim(k):
            dx, dv = b.as_index(b.dim(x, k)), b.as_index(b.dim(v, k))
            b.require(arith.cmpi(EQ, dv, dx),
                      f"node '{op.name}' ({op.op_type}): input '{what}' has {{0}} in dim "
                      f"{k}, expected {{1}} (the dim of '{xname}')", dv, dx)


def _lower(op: OnnxOp, b: LoweringContext, factors, body):
    """factors(f64 r, i64 t) -> f64 scalars (rounded to the tensors' type);
    body(consts, scalars, *elements) -> the yielded new values."""
    roles, _ = ROLES[op.op_type]
    n, by_role = groups(op)
    f64 = ir.F64Type.get()
    r = _one_element(op, b, op.input(0), "R")
    r = arith.extf(f64, r) if r.type != f64 else r
    t = _one_element(op, b, op.input(1), "T")
    outs: list[list[ir.Value]] = [[] for _ in roles[1:]]
    scalars = None
    for i in range(n):
        ins = [by_role[c][i] for c in roles]
        x = ins[0]
        b.ranked(op, x, f"input 'X{i + 1}'")
        for c, v in zip(roles[1:], ins[1:]):
            b.ranked(op, v, f"input '{c}{i + 1}'")
            _same_dims(op, b, x, v, f"{c}{i + 1}", f"X{i + 1}")
        et = x.type.element_type
        if scalars is None:
            scalars = [s if et == f64 else arith.truncf(et, s) for s in factors(r, t)]
        dims = b.dims(x)
        n_out = len(roles) - 1
        inits = [b.empty(dims, et) for _ in range(n_out)]
        ident = affine_map(len(dims), list(range(len(dims))))
        c = lambda v: b.const(v, et)  # noqa: E731
        res = b.generic(ins, inits, [ident] * (len(ins) + n_out), ["parallel"] * len(dims),
                        lambda *a: body(c, scalars, *a[:len(ins)]))
        for k, v in enumerate(res):
            outs[k].append(v)
    flat = [v for group in outs for v in group]
    return [b.cast_to(v, b.result_type(op, k)) for k, v in enumerate(flat)]


def _one_minus(a: float) -> float:
    """1 - a in f32, as onnx.reference (np.float32 attributes)."""
    return float(np.float32(1.0) - np.float32(a))


def _f64(x: float) -> ir.Value:
    return arith.constant(ir.F64Type.get(), float(x))


def _t_f64(t: ir.Value) -> ir.Value:
    return arith.sitofp(ir.F64Type.get(), t)


def _t_positive(t: ir.Value) -> ir.Value:
    return arith.cmpi(arith.CmpIPredicate.sgt, t, arith.constant(t.type, 0))


@lowering("Adagrad", 1, domain=TRAINING)
def lower_adagrad(op: OnnxOp, b: LoweringContext):
    a = op.attrs
    nc, decay, eps = a.norm_coefficient, a.decay_factor, a.epsilon

    def factors(r, t):   # r / (1 + t * decay_factor)
        return [arith.divf(r, arith.addf(_f64(1.0), arith.mulf(_t_f64(t), _f64(decay))))]

    def body(c, s, x, g, h):
        gr = arith.addf(arith.mulf(c(nc), x), g)
        h_new = arith.addf(h, arith.mulf(gr, gr))
        h_ad = arith.addf(mmath.sqrt(h_new), c(eps))
        x_new = arith.subf(x, arith.divf(arith.mulf(s[0], gr), h_ad))
        return [x_new, h_new]
    return _lower(op, b, factors, body)


@lowering("Adam", 1, domain=TRAINING)
def lower_adam(op: OnnxOp, b: LoweringContext):
    a = op.attrs
    nc, ncp, alpha, beta, eps = (a.norm_coefficient, a.norm_coefficient_post, a.alpha,
                                 a.beta, a.epsilon)

    def factors(r, t):   # T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
        tf = _t_f64(t)
        one = _f64(1.0)
        bt = arith.subf(one, mmath.powf(_f64(beta), tf))
        at = arith.subf(one, mmath.powf(_f64(alpha), tf))
        adj = arith.divf(arith.mulf(r, mmath.sqrt(bt)), at)
        return [arith.select(_t_positive(t), adj, r)]

    def body(c, s, x, g, v, h):
        gr = arith.addf(arith.mulf(c(nc), x), g)
        v_new = arith.addf(arith.mulf(c(alpha), v), arith.mulf(c(_one_minus(alpha)), gr))
        h_new = arith.addf(arith.mulf(c(beta), h), arith.mulf(c(_one_minus(beta)),
                                                               arith.mulf(gr, gr)))
        h_sqrt = arith.addf(mmath.sqrt(h_new), c(eps))
        x_new = arith.subf(x, arith.mulf(s[0], arith.divf(v_new, h_sqrt)))
        return [arith.mulf(c(_one_minus(ncp)), x_new), v_new, h_new]
    return _lower(op, b, factors, body)


@lowering("Momentum", 1, domain=TRAINING)
def lower_momentum(op: OnnxOp, b: LoweringContext):
    a = op.attrs
    nc, alpha, beta, nesterov = a.norm_coefficient, a.alpha, a.beta, a.mode == "nesterov"

    def factors(r, t):   # R, and beta (1 at T = 0)
        return [r, arith.select(_t_positive(t), _f64(beta), _f64(1.0))]

    def body(c, s, x, g, v):
        gr = arith.addf(arith.mulf(c(nc), x), g)
        v_new = arith.addf(arith.mulf(c(alpha), v), arith.mulf(s[1], gr))
        step = arith.addf(gr, arith.mulf(c(alpha), v_new)) if nesterov else v_new
        return [arith.subf(x, arith.mulf(s[0], step)), v_new]
    return _lower(op, b, factors, body)
