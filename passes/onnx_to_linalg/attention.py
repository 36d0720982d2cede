"""Attention (v23) -> one call of a private attention function;
CausalConvWithState (v27) -> concat / windowed generic / slice (at the end).

Lowered here (other forms are expanded into the op's ONNX function body by
``expand-functions``, see :func:`unsupported`): 4-D f32 Q [B, Hq, Sq, D],
K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv] with static D, Dv and heads (Hq a
multiple of Hkv: grouped-query heads), an optional f32 additive mask of
rank <= 4 whose dims are 1 or the score dim (a dynamic mask dim that is 1 at
run time broadcasts: the mask is expanded first, in a run-time branch, as
for any elementwise operand: ``broadcast.runtime_broadcast``), no past key/value,
no causal flag, no softcap, only the output Y.

    KT  = transpose(K, [0, 1, 3, 2])        (merges with the transpose before)
    Y   = call @__om_attention_<n>(Q, KT, V, mask4, scores, Y0)

``mask4`` is the mask viewed at rank 4; ``scores`` is an empty [B, Hq, Sq,
Skv] tensor allocated (and size-checked) here for the reference body, which
is plain linalg (:func:`reference_text`: scores, scale + mask, softmax,
P @ V). At -O3 ``passes/optimize/attention.py`` gives the call a tiled vector
kernel instead (the scores then never exist as a whole). The call carries
:data:`CALL_ATTR` (scale, head group, NaN rows) for it.

Run-time checks (a failing model call naming the node): Q, K, V batch sizes
agree, K and V sequence lengths agree, each dynamic mask dim is 1 or its
score dim. A row whose scores are all -inf gives a zero row (Attention's
rule) unless the op came from the fused softmax pattern
(``optimize_onnx/attention.py``, :data:`NAN_ROWS_ATTR`): then NaN, as the
unfused ops compute it.
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import arith, func, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, val

NAN_ROWS_ATTR = "om.softmax_nan_rows"
CALL_ATTR = "om.attention"
PREFIX = "__om_attention"


def _f32_4d(v) -> bool:
    return v is not None and isinstance(v.type, ir.RankedTensorType) and v.type.rank == 4 \
        and isinstance(v.type.element_type, ir.F32Type)


def unsupported(op: OnnxOp) -> str | None:
    """Why this lowering does not take ``op`` (None: it does)."""
    q, k, v, m = (op.input(i) for i in range(4))
    if any(op.input(i) is not None for i in range(4, 7)):
        return "past key/value inputs are not supported"
    if result_slots(op) != [0]:
        return "only output Y is supported"
    if op.attrs.is_causal or op.attrs.softcap:
        return "is_causal / softcap are not supported"
    if not (_f32_4d(q) and _f32_4d(k) and _f32_4d(v)):
        return "Q, K, V must be 4-D f32"
    if m is not None and (not isinstance(m.type, ir.RankedTensorType) or m.type.rank > 4
                          or not isinstance(m.type.element_type, ir.F32Type)):
        return "the mask must be f32 of rank <= 4"
    qs, ks, vs = (OnnxOp.shape(x) for x in (q, k, v))
    if None in (qs[1], qs[3], ks[1], ks[3], vs[1], vs[3]) or ks[3] != qs[3] or ks[1] != vs[1] \
            or qs[1] % ks[1]:
        return "head sizes and head counts must be static and agree"
    return None


def _t(shape, et="f32") -> str:
    return "tensor<" + "".join(("?" if s is None else str(s)) + "x" for s in shape) + et + ">"


def _shape(v) -> list:
    t = v.type
    return [None if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(t.rank)]


def _f(x: float) -> str:
    """An f32 literal, exact (its bit pattern)."""
    import struct
    return "0x%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def mask_map(ms) -> str:
    """Affine results indexing the rank-4 mask from (b, h, i, j)."""
    names = ["d0", "d1", "d2", "d3"]
    return ", ".join("0" if s == 1 else names[k] for k, s in enumerate(ms))


def reference_text(name: str, qs, kts, vs, ms, ss, ys, scale: float, group: int,
                   nan_rows: bool) -> str:
    """The private function in plain linalg (any -O level)."""
    tq, tkt, tv, ts, ty = _t(qs), _t(kts), _t(vs), _t(ss), _t(ys)
    rs = ss[:3]
    tr = _t(rs)
    m_arg = f", %m: {_t(ms)}" if ms is not None else ""
    dyn_r = [f"%d{k}" for k, s in enumerate(rs) if s is None]
    hk = f"d1 floordiv {group}" if group > 1 else "d1"
    id4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
    r3 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"
    par4 = '["parallel", "parallel", "parallel", "parallel"]'
    red4 = '["parallel", "parallel", "parallel", "reduction"]'
    lines = [f"func.func private @{name}(%q: {tq}, %kt: {tkt}, %v: {tv}{m_arg}, %sc: {ts}, "
             f"%y: {ty}) -> {ty} {{",
             "  %zero = arith.constant 0.0 : f32",
             "  %ninf = arith.constant 0xFF800000 : f32",
             f"  %scale = arith.constant {_f(scale)} : f32"]
    for k, s in enumerate(rs):
        if s is None:
            lines.append(f"  %c{k} = arith.constant {k} : index")
            lines.append(f"  %d{k} = tensor.dim %q, %c{k} : {tq}")
    lines += [
        f"  %s0 = linalg.fill ins(%zero : f32) outs(%sc : {ts}) -> {ts}",
        "  %s1 = linalg.generic {indexing_maps = ["
        "affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, "
        f"affine_map<(d0, d1, d2, d3, d4) -> (d0, {hk}, d4, d3)>, "
        "affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = "
        '["parallel", "parallel", "parallel", "parallel", "reduction"]} '
        f"ins(%q, %kt : {tq}, {tkt}) outs(%s0 : {ts}) {{",
        "  ^bb0(%a: f32, %b: f32, %acc: f32):",
        "    %p = arith.mulf %a, %b : f32",
        "    %r = arith.addf %acc, %p : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {ts}"]
    if ms is not None:
        lines += [
            f"  %s2 = linalg.generic {{indexing_maps = [{id4}, affine_map<(d0, d1, d2, d3) -> "
            f"({mask_map(ms)})>, {id4}], iterator_types = {par4}}} "
            f"ins(%s1, %m : {ts}, {_t(ms)}) outs(%sc : {ts}) {{",
            "  ^bb0(%x: f32, %mk: f32, %o: f32):",
            "    %xs = arith.mulf %x, %scale : f32",
            "    %r = arith.addf %xs, %mk : f32",
            "    linalg.yield %r : f32",
            f"  }} -> {ts}"]
    else:
        lines += [
            f"  %s2 = linalg.generic {{indexing_maps = [{id4}, {id4}], iterator_types = {par4}}} "
            f"ins(%s1 : {ts}) outs(%sc : {ts}) {{",
            "  ^bb0(%x: f32, %o: f32):",
            "    %r = arith.mulf %x, %scale : f32",
            "    linalg.yield %r : f32",
            f"  }} -> {ts}"]
    dr = ", ".join(dyn_r)
    lines += [
        f"  %re = tensor.empty({dr}) : {tr}",
        f"  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : {tr}) -> {tr}",
        f"  %mx = linalg.generic {{indexing_maps = [{id4}, {r3}], iterator_types = {red4}}} "
        f"ins(%s2 : {ts}) outs(%mx0 : {tr}) {{",
        "  ^bb0(%x: f32, %acc: f32):",
        "    %r = arith.maximumf %acc, %x : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {tr}",
        f"  %ex = linalg.generic {{indexing_maps = [{id4}, {r3}, {id4}], iterator_types = {par4}}} "
        f"ins(%s2, %mx : {ts}, {tr}) outs(%sc : {ts}) {{",
        "  ^bb0(%x: f32, %mm: f32, %o: f32):",
        "    %dd = arith.subf %x, %mm : f32",
        "    %r = math.exp %dd : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {ts}",
        f"  %sm0 = linalg.fill ins(%zero : f32) outs(%re : {tr}) -> {tr}",
        f"  %sm = linalg.generic {{indexing_maps = [{id4}, {r3}], iterator_types = {red4}}} "
        f"ins(%ex : {ts}) outs(%sm0 : {tr}) {{",
        "  ^bb0(%x: f32, %acc: f32):",
        "    %r = arith.addf %acc, %x : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {tr}",
        f"  %pr = linalg.generic {{indexing_maps = [{id4}, {r3}, {r3}, {id4}], "
        f"iterator_types = {par4}}} ins(%ex, %sm, %mx : {ts}, {tr}, {tr}) outs(%sc : {ts}) {{",
        "  ^bb0(%x: f32, %s: f32, %mm: f32, %o: f32):",
        "    %q1 = arith.divf %x, %s : f32"]
    if nan_rows:
        lines.append("    linalg.yield %q1 : f32")
    else:   # a row masked everywhere (max -inf) -> 0
        lines += ["    %dead = arith.cmpf oeq, %mm, %ninf : f32",
                  "    %r = arith.select %dead, %zero, %q1 : f32",
                  "    linalg.yield %r : f32"]
    lines += [
        f"  }} -> {ts}",
        f"  %y0 = linalg.fill ins(%zero : f32) outs(%y : {ty}) -> {ty}",
        "  %y1 = linalg.generic {indexing_maps = ["
        "affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, "
        f"affine_map<(d0, d1, d2, d3, d4) -> (d0, {hk}, d4, d3)>, "
        "affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = "
        '["parallel", "parallel", "parallel", "parallel", "reduction"]} '
        f"ins(%pr, %v : {ts}, {tv}) outs(%y0 : {ty}) {{",
        "  ^bb0(%a: f32, %b: f32, %acc: f32):",
        "    %p = arith.mulf %a, %b : f32",
        "    %r = arith.addf %acc, %p : f32",
        "    linalg.yield %r : f32",
        f"  }} -> {ty}",
        f"  return %y1 : {ty}",
        "}"]
    return "\n".join(lines)


def _add_function(module: ir.Module, text: str) -> None:
    sub = ir.Module.parse("module {\n" + text + "\n}", module.context)
    for o in sub.body.operations:
        o.operation.clone(ir.InsertionPoint.at_block_begin(module.body))


def _mask4(b: LoweringContext, m):
    """The mask at rank 4 (leading unit dims) and its shape."""
    r = m.type.rank
    ms = [1] * (4 - r) + _shape(m)
    if r == 4:
        return m, ms
    dyn = ir.ShapedType.get_dynamic_size()
    static = [dyn if s is None else s for s in ms]
    t = ir.RankedTensorType.get(static, m.type.element_type)
    assoc = [] if r == 0 else [list(range(4 - r + 1))] + [[4 - r + k] for k in range(1, r)]
    sizes = [b.dim(m, k - (4 - r)) for k in range(4) if ms[k] is None]
    return tensor.expand_shape(t, m, assoc, sizes, static), ms


@lowering("Attention", 23)
def lower_attention(op: OnnxOp, b: LoweringContext):
    why = unsupported(op)
    if why is not None:
        op.fail(why)
    q, k, v, m = (op.input(i) for i in range(4))
    d = q.type.shape[3]
    scale = op.attrs.scale
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    group = q.type.shape[1] // k.type.shape[1]
    res = attention_call(op, b, q, k, v, m, scale, group, NAN_ROWS_ATTR in op.op.attributes)
    yt = b.result_type(op)
    if str(res.type) != str(yt):
        res = tensor.cast(yt, res)
    return [res]


def attention_call(op: OnnxOp, b: LoweringContext, q, k, v, m, scale: float, group: int,
                   nan_rows: bool = False, mask_exact: bool = False) -> ir.Value:
    """Y [B, Hq, Sq, Dv] = softmax(Q K^T * scale + m) V as one call of a private
    attention function (plain linalg; the -O3 kernel replaces the call): f32
    Q [B, Hq, Sq, D], K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv] with static D, Dv
    and heads (query head h reads kv head h // ``group``), ``m`` None or an
    f32 additive mask of rank <= 4 whose dims are 1 or the score dim
    (``mask_exact``: a rank-4 mask built with exactly those dims, statically 1
    where it broadcasts: not checked or broadcast again). Checks the dims that
    must agree (failures name ``op``'s node). Also used by the com.microsoft
    attention ops (ms_attention.py)."""
    qd, kd, vd = b.dims(q), b.dims(k), b.dims(v)
    chk = checks(op, b)         # failures name the node, at compile or at run time

    def require_eq(x, y, what: str):
        x, y = wrap(x), wrap(y)
        chk.require(D.eq(x, y), f"{what}: {{0}} != {{1}}", x, y)
    require_eq(kd[0], qd[0], "K batch size != Q batch size")
    require_eq(vd[0], qd[0], "V batch size != Q batch size")
    require_eq(vd[2], kd[2], "V sequence length != K sequence length")
    sdims = [qd[0], qd[1], qd[2], kd[2]]
    ms = None
    if m is not None and mask_exact:
        m4, ms = m, _shape(m)
    elif m is not None:
        m4, ms = _mask4(b, m)
        md = b.dims(m4)
        for kk in range(4):
            what = f"attn_mask dim {kk} must be 1 or the score dim"
            if ms[kk] is None:      # 1 at run time broadcasts, like any elementwise operand
                x, y = wrap(md[kk]), wrap(sdims[kk])
                chk.require(D.either(D.eq(x, 1), D.eq(x, y)), f"{what}: {{0}} != {{1}}", x, y)
            elif ms[kk] != 1:
                require_eq(md[kk], sdims[kk], what)
        m4 = runtime_broadcast(b, m4, sdims, 4, {})
    kt_dims = [kd[0], kd[1], kd[3], kd[2]]
    kt = val(linalg.transpose(k, outs=[b.empty(kt_dims, k.type.element_type)],
                              permutation=[0, 1, 3, 2]))
    scores = b.empty(sdims, q.type.element_type)
    y0 = b.empty([qd[0], qd[1], qd[2], vd[3]], q.type.element_type)
    name = f"{PREFIX}_{_next(b)}"
    _add_function(b.module, reference_text(name, _shape(q), _shape(kt), _shape(v), ms,
                                           _shape(scores), _shape(y0), scale, group, nan_rows))
    args = [q, kt, v] + ([m4] if m is not None else []) + [scores, y0]
    call = func.CallOp([y0.type], ir.FlatSymbolRefAttr.get(name), args)
    call.attributes[CALL_ATTR] = ir.DictAttr.get({
        "scale": ir.FloatAttr.get_f32(scale),
        "group": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), group),
        "nan_rows": ir.BoolAttr.get(nan_rows),
        "mask": ir.BoolAttr.get(m is not None)})
    return call.results[0]


lower_attention.unsupported = unsupported


def _next(b: LoweringContext) -> int:
    n = getattr(b, "_attention_count", 0)
    b._attention_count = n + 1
    return n


# ---- CausalConvWithState --------------------------------------------------

CAUSAL_ACTIVATIONS = ("none", "silu", "swish")


@lowering("CausalConvWithState", 27)
def lower_causal_conv_with_state(op: OnnxOp, b: LoweringContext):
    """padded = concat(past_state or zeros, x) along the length; output[n, c, t]
    = bias[c] + sum_j w[c, 0, j] * padded[n, c, t + j] (then v * sigmoid(v)
    for silu / swish); present_state = the last k - 1 positions of padded.
    f16 / bf16 accumulate in f32 and round the conv before the activation,
    as the reference does. Every dim may be dynamic (k too)."""
    from mlir.dialects import math
    from onnx_mlir_py.passes.onnx_to_linalg.builder import affine_map
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import require_same_dim
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, iadd,
                                                                insert_slice, isub)
    x, w, bias, past = (op.input(i) for i in range(4))
    act = op.attrs.activation or "none"
    if act not in CAUSAL_ACTIVATIONS:
        op.fail(f"activation must be one of {', '.join(CAUSAL_ACTIVATIONS)}, got {act!r}")
    for v, what, rank in ((x, "input", 3), (w, "weight", 3), (past, "past_state", 3),
                          (bias, "bias", 1)):
        if v is not None and b.ranked(op, v, what).rank != rank:
            op.fail(f"{what} must have rank {rank}, got {v.type}")
    et = x.type.element_type
    if not isinstance(et, (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type)):
        op.fail(f"input must be a float tensor, got {x.type}")
    ct = ir.F32Type.get() if isinstance(et, (ir.F16Type, ir.BF16Type)) else et
    chk = checks(op, b)
    require_same_dim(op, b, w, 0, x, 1, "weight", "input")
    one_dim = wrap(b.dim(w, 1))
    chk.require(D.eq(one_dim, 1), "weight dim 1 is {0}; it must be 1 (depthwise)", one_dim)
    k = b.dim(w, 2)
    chk.require(D.ge(wrap(k), 1), "weight dim 2 (the kernel size) is {0}; it must be >= 1",
                wrap(k))
    if bias is not None:
        require_same_dim(op, b, bias, 0, x, 1, "bias", "input")
    n, c, length = b.dims(x)
    km1 = isub(b, k, 1)
    if past is not None:
        require_same_dim(op, b, past, 0, x, 0, "past_state", "input")
        require_same_dim(op, b, past, 1, x, 1, "past_state", "input")
        pl = wrap(b.dim(past, 2))
        chk.require(D.eq(pl, wrap(km1)), "past_state dim 2 is {0}; it must be the kernel size "
                    "- 1 ({1})", pl, wrap(km1))
    padded = b.full([n, c, iadd(b, km1, length)], et, LoweringContext.const(0.0, et))
    if past is not None:
        padded = insert_slice(past, padded, [0, 0, 0], b.dims(past))
    padded = insert_slice(x, padded, [0, 0, km1], [n, c, length])
    present = extract_slice(b, padded, [0, 0, length], [n, c, km1])

    def up(v):
        return arith.extf(ct, v) if v.type != ct else v

    # the accumulators start at the bias (or 0)
    init = b.full([n, c, length], ct, LoweringContext.const(0.0, ct))
    if bias is not None:
        init = b.generic([bias], [init], [affine_map(3, [1]), affine_map(3, [0, 1, 2])],
                         ["parallel"] * 3, lambda bv, _o: up(bv))[0]
    d = [ir.AffineDimExpr.get(i) for i in range(4)]
    maps = [ir.AffineMap.get(4, 0, [d[0], d[1], d[2] + d[3]]),
            ir.AffineMap.get(4, 0, [d[1], ir.AffineConstantExpr.get(0), d[3]]),
            ir.AffineMap.get(4, 0, [d[0], d[1], d[2]])]
    # the window loop's extent (k) is the weight's dim 2
    conv = b.generic([padded, w], [init], maps, ["parallel"] * 3 + ["reduction"],
                     lambda pv, wv, acc: arith.addf(acc, arith.mulf(up(pv), up(wv))))[0]

    def finish(v):
        if ct != et:       # the conv is rounded to the input type first
            v = arith.extf(ct, arith.truncf(et, v))
        if act != "none":
            one = LoweringContext.const(1.0, ct)
            v = arith.mulf(v, arith.divf(one, arith.addf(one, math.exp(arith.negf(v)))))
        return arith.truncf(et, v) if ct != et else v
    out = b.map_elementwise([conv], [n, c, length], et, finish)
    return [b.cast_to(out, b.result_type(op, 0)), b.cast_to(present, b.result_type(op, 1))]
