"""Scaled dot-product attention as torch exports it -> one ONNX ``Attention``
(opset-23 schema), which ``onnx_to_linalg/attention.py`` lowers to one fused
kernel call (at -O3 a tiled vector kernel, ``passes/optimize/attention.py``):

    S = MatMul(Q, KT)                 Q [B, H, Sq, D], KT [B, H, D, Skv]
    S = Div(S, c) | Mul(S, c)         optional, c a constant scalar
    S = Where(allow, S, fill)         optional, fill -inf or <= -1e30 (transformers'
                                      causal mask): mask += Where(allow, 0, fill)
    S = Add(S, mask) | Add(mask, S)   optional, an f32 mask of rank <= 4
    P = Softmax(S, axis=-1)
    Y = MatMul(P, V)                  V [B, H, Skv, Dv]
        => Y = Attention(Q, Transpose(KT, [0, 1, 3, 2]), V, mask, scale)

(the Transpose merges with the one that made KT). Legal only when every
intermediate has one use, everything is f32, the ranks are 4, the head
sizes D, Dv and the head count H are static and the dims that must agree
do (statically; B and the sequence lengths are checked at run time by the
lowering). The softmax of a row whose scores are all -inf is NaN (as the
unfused ops compute it), not the zero row of ``Attention``: the new op is
marked with :data:`NAN_ROWS_ATTR`.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.schema import spec_table
from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, create_op, is_constant,
                                                       lowerable_spec, make_constant,
                                                       module_opset, n_uses, onnx_ops,
                                                       producer_view)

NAN_ROWS_ATTR = "om.softmax_nan_rows"
# Where(cond, S, fill) is S + (cond ? 0 : fill) when fill absorbs any score:
# -inf, or finfo(f32).min as transformers writes it (|S| < 1e30 vanishes in it)
FILL_MAX = -1e30
ATTENTION_VERSION = 23


def _f32(v: ir.Value | None) -> bool:
    return v is not None and isinstance(v.type, ir.RankedTensorType) \
        and isinstance(v.type.element_type, ir.F32Type)


def _one_use(v: ir.Value) -> bool:
    return n_uses(v) == 1


def _scalar_const(v: ir.Value) -> float | None:
    if not is_constant(v):
        return None
    arr = constant_values([v])[0]
    if arr is None or arr.size != 1 or arr.dtype != np.float32:
        return None
    return float(arr.reshape(()))


def _softmax_last(sm: OnnxOp) -> bool:
    r = sm.rank(sm.input(0))
    return r == 4 and sm.version >= 13 and sm.attrs.axis in (-1, 3)


def _agree(a, b) -> bool:
    """Dims that must be equal: equal when both static (dynamic: run-time check)."""
    return a is None or b is None or a == b


def match(sm: OnnxOp):
    """(q, kt, v, mask | None, scale, ops to erase, final MatMul) or None."""
    if not _softmax_last(sm) or not _f32(sm.input(0)):
        return None
    p = sm.op.results[0]
    if not _one_use(p):
        return None
    user = next(iter(p.uses)).owner
    user = user.operation if isinstance(user, ir.OpView) else user
    if user.name not in spec_table().by_mlir_name:
        return None
    pv = OnnxOp(user)
    if pv.op_type != "MatMul" or pv.spec.domain or pv.input(0) != p:
        return None
    erase = [pv.op, sm.op]
    s, mask, scale = sm.input(0), None, 1.0
    add = producer_view(s, "Add")
    if add is not None and _one_use(s):
        for kinds in (("Div", "Mul", "MatMul"), ("Where",)):     # the scores' side
            for si, mi in ((0, 1), (1, 0)):
                x = add.input(si)
                if mask is None and any(producer_view(x, k) for k in kinds):
                    s, mask = x, add.input(mi)
        if mask is None or not _f32(mask) or mask.type.rank > 4 \
                or str(add.op.results[0].type) != str(s.type):
            return None
        erase.append(add.op)
    where = None
    wh = producer_view(s, "Where")
    if wh is not None and _one_use(s):
        fill = _scalar_const(wh.input(2))
        cond = wh.input(0)
        if fill is None or fill > FILL_MAX or cond.type.rank > 4 \
                or str(wh.op.results[0].type) != str(wh.input(1).type) \
                or not isinstance(cond.type.element_type, ir.IntegerType) \
                or cond.type.element_type.width != 1:
            return None
        where = (cond, wh.input(2))
        s = wh.input(1)
        erase.append(wh.op)
    for kind in ("Div", "Mul"):
        sc = producer_view(s, kind)
        if sc is None or not _one_use(s):
            continue
        c = _scalar_const(sc.input(1))
        if c is None or c == 0.0 or str(sc.op.results[0].type) != str(sc.input(0).type):
            return None
        scale = 1.0 / c if kind == "Div" else c
        s = sc.input(0)
        erase.append(sc.op)
        break
    qk = producer_view(s, "MatMul")
    if qk is None or not _one_use(s):
        return None
    erase.append(qk.op)
    q, kt, v = qk.input(0), qk.input(1), pv.input(1)
    if not all(_f32(x) and x.type.rank == 4 for x in (q, kt, v)):
        return None
    qs, ks, vs = OnnxOp.shape(q), OnnxOp.shape(kt), OnnxOp.shape(v)
    d, dv, h = qs[3], vs[3], qs[1]
    if d is None or dv is None or h is None or ks[2] != d or ks[1] != h or vs[1] != h:
        return None
    if not (_agree(qs[0], ks[0]) and _agree(qs[0], vs[0]) and _agree(ks[3], vs[2])):
        return None
    ys = OnnxOp.shape(pv.op.results[0])
    if ys is None or len(ys) != 4 or ys[1] != h or ys[3] != dv:
        return None
    return q, kt, v, mask, where, scale, erase, pv


def _broadcast(a, b) -> list:
    """Static dims of the broadcast of two ONNX shapes (None: dynamic)."""
    a, b = list(a), list(b)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        out.append(y if x == 1 else x if y == 1 else x if x == y else
                   (x if y is None else y if x is None else None))
    return out


def _dyn(shape) -> list[int]:
    return [ir.ShapedType.get_dynamic_size() if d is None else d for d in shape]


def _where_mask(where, mask, opset, loc):
    """The additive mask of Where(cond, S, fill) (+ mask): Where(cond, 0, fill) (+ mask)."""
    cond, fill = where
    f32 = ir.F32Type.get()
    zero = make_constant(np.zeros((), np.float32), loc, "zero")
    cs = OnnxOp.shape(cond)
    m = create_op(lowerable_spec("Where", opset), [cond, zero, fill],
                  [ir.RankedTensorType.get(_dyn(cs), f32)], {}, loc).results[0]
    if mask is None:
        return m
    shape = _broadcast(cs, OnnxOp.shape(mask))
    return create_op(lowerable_spec("Add", opset), [m, mask],
                     [ir.RankedTensorType.get(_dyn(shape), f32)], {}, loc).results[0]


def fuse_attention(module: ir.Module) -> int:
    spec = spec_table().resolve("", "Attention", ATTENTION_VERSION)
    opset = module_opset(module)
    tspec = lowerable_spec("Transpose", opset)
    count = 0
    for sm in onnx_ops(module, "Softmax"):
        found = match(sm)
        if found is None:
            continue
        q, kt, v, mask, where, scale, erase, pv = found
        loc = ir.Location.fused([o.location for o in reversed(erase)])
        ks = kt.type.shape
        kt_t = ir.RankedTensorType.get([ks[0], ks[1], ks[3], ks[2]], kt.type.element_type)
        with ir.InsertionPoint(pv.op), loc:
            if where is not None:
                mask = _where_mask(where, mask, opset, loc)
            k = create_op(tspec, [kt], [kt_t],
                          {"perm": ir.DenseI64ArrayAttr.get([0, 1, 3, 2])}, loc).results[0]
            att = create_op(spec, [q, k, v, mask], [pv.op.results[0].type],
                            {"scale": ir.FloatAttr.get_f32(scale)}, loc)
            att.attributes[NAN_ROWS_ATTR] = ir.UnitAttr.get()
        y = pv.op.results[0]
        y.replace_all_uses_with(att.results[0])
        for o in erase:
            o.erase()
        count += 1
    return count
