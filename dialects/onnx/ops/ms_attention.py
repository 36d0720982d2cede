"""com.microsoft attention: MultiHeadAttention, Attention, GroupQueryAttention
(onnxruntime's contrib ops, as its CPU kernels define them).

* MultiHeadAttention: query [B, S, D]; key/value [B, L, D] / [B, L, Dv], or
  [B, N, L, H] / [B, N, L, Hv] (cross attention with the keys and values of
  the heads given); past_key/past_value [B, N, P, H]. T = P + L. Results:
  output [B, S, N * Hv], present_key [B, N, T, H], present_value
  [B, N, T, Hv], qk [B, N, S, T].
* Attention: input [B, S, Di] @ weights [Di, D + D + Dv] (+ bias); past
  [2, B, N, P, H]; T = P + S. Results: output [B, S, Dv], present
  [2, B, N, T, H].
* GroupQueryAttention: query [B, S, N * H], key/value [B, S, Nkv * H], past
  [B, Nkv, P, H] (BNSH); the present buffers hold max(total_sequence_length,
  P) positions (a run-time value unless total_sequence_length is constant):
  output [B, S, N * H], present_key/value [B, Nkv, max(total, P), H],
  output_qk [B, N, S, max(total, P)].

:func:`mha_checks` and :func:`attention_checks` (onnxruntime's shape rules
on dims) run at verification (static dims) and again in the lowering
(run-time dims). Variants the lowering does not implement are refused there.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, fmt
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots

MS = "com.microsoft"


def _dims(op: OnnxOp, i: int):
    """Dims of input i for a check helper (None: absent or unranked)."""
    return D.from_static(op.shape(op.input(i)))


def _rank(op: OnnxOp, i: int, name: str, ranks) -> None:
    s = op.shape(op.input(i))
    if s is not None and len(s) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        op.fail(f"input '{name}' has shape {fmt(s)}: expected rank {want}")


def _heads(op: OnnxOp, name: str = "num_heads") -> int:
    n = getattr(op.attrs, name)
    if n is None or n < 1:
        op.fail(f"attribute '{name}' = {n}: expected a positive number of heads")
    return n


def _same_elem(op: OnnxOp, idx, names) -> None:
    et = op.elem(op.input(0))
    for i, name in zip(idx, names):
        e = op.elem(op.input(i))
        if et is not None and e is not None and e != et:
            op.fail(f"input '{name}' has element type {e}: expected query's ({et})")


# -- MultiHeadAttention ------------------------------------------------------------

def mha_checks(ctx: D.ShapeChecks, n: int, q, k, v, bias, kpm, ab, pk, pv) -> None:
    """onnxruntime's MultiHeadAttention shape rules on dims (None: absent):
    q [B, S, D]; k, v [B, L, D] / [B, L, Dv] or [B, N, L, H] / [B, N, L, Hv];
    bias [D + D + Dv]; key_padding_mask [B], [B, T] or [B, S, T];
    attention_bias [B or 1, N or 1, S, T]; past [B, N, P, H] (H = Hv)."""
    bsz, s, d = q
    ctx.require(D.eq(d % n, 0), f"query hidden size {{0}} is not a multiple of num_heads {n}", d)
    hd = d // n
    if len(k) == 3:
        ctx.require(D.eq(k[0], bsz), "key dim 0 is {0}: expected query's batch size {1}", k[0], bsz)
        ctx.require(D.eq(k[2], d), "key dim 2 is {0}: expected query's hidden size {1}", k[2], d)
        ctx.require(D.eq(v[0], bsz), "value dim 0 is {0}: expected query's batch size {1}",
                    v[0], bsz)
        ctx.require(D.eq(v[1], k[1]), "value dim 1 is {0}: expected key's sequence length {1}",
                    v[1], k[1])
        ctx.require(D.eq(v[2] % n, 0), f"value hidden size {{0}} is not a multiple of "
                    f"num_heads {n}", v[2])
        length, dv = k[1], v[2]
    else:
        for name, x in (("key", k), ("value", v)):
            ctx.require(D.eq(x[0], bsz), f"{name} dim 0 is {{0}}: expected query's batch size "
                        f"{{1}}", x[0], bsz)
            ctx.require(D.eq(x[1], n), f"{name} dim 1 is {{0}}: expected num_heads {n}", x[1])
        ctx.require(D.eq(k[3], hd), "key dim 3 is {0}: expected the head size {1}", k[3], hd)
        ctx.require(D.eq(v[2], k[2]), "value dim 2 is {0}: expected key's sequence length {1}",
                    v[2], k[2])
        length, dv = k[2], n * v[3]
    if bias is not None:
        ctx.require(D.eq(bias[0], d + d + dv), "bias has {0} elements: expected {1} "
                    "(D + D + Dv)", bias[0], d + d + dv)
    p = 0
    if pk is not None:
        for name, x in (("past_key", pk), ("past_value", pv)):
            ctx.require(D.eq(x[0], bsz), f"{name} dim 0 is {{0}}: expected the batch size {{1}}",
                        x[0], bsz)
            ctx.require(D.eq(x[1], n), f"{name} dim 1 is {{0}}: expected num_heads {n}", x[1])
            ctx.require(D.eq(x[3], hd), f"{name} dim 3 is {{0}}: expected the head size {{1}}",
                        x[3], hd)
        ctx.require(D.eq(pv[2], pk[2]), "past_value dim 2 is {0}: expected past_key's {1}",
                    pv[2], pk[2])
        p = pk[2]
    t = p + length
    if kpm is not None:
        ctx.require(D.eq(kpm[0], bsz), "key_padding_mask dim 0 is {0}: expected the batch "
                    "size {1} (the (3 * B + 2) form is not supported)", kpm[0], bsz)
        if len(kpm) == 3:
            ctx.require(D.eq(kpm[1], s), "key_padding_mask dim 1 is {0}: expected the query "
                        "sequence length {1}", kpm[1], s)
        if len(kpm) > 1:
            ctx.require(D.eq(kpm[-1], t), f"key_padding_mask dim {len(kpm) - 1} is {{0}}: "
                        f"expected the total sequence length {{1}}", kpm[-1], t)
    if ab is not None:
        _bias_checks(ctx, ab, bsz, n, s, t)


def _bias_checks(ctx: D.ShapeChecks, ab, bsz, n: int, s, t) -> None:
    ctx.require(D.either(D.eq(ab[0], 1), D.eq(ab[0], bsz)), "attention_bias dim 0 is {0}: "
                "expected 1 or the batch size {1}", ab[0], bsz)
    ctx.require(D.either(D.eq(ab[1], 1), D.eq(ab[1], n)), f"attention_bias dim 1 is {{0}}: "
                f"expected 1 or num_heads {n}", ab[1])
    ctx.require(D.eq(ab[2], s), "attention_bias dim 2 is {0}: expected the query sequence "
                "length {1}", ab[2], s)
    ctx.require(D.eq(ab[3], t), "attention_bias dim 3 is {0}: expected the total sequence "
                "length {1}", ab[3], t)


MHA_INPUTS = ("query", "key", "value", "bias", "key_padding_mask", "attention_bias",
              "past_key", "past_value", "past_sequence_length", "cache_indirection")


@verifier("MultiHeadAttention", 1, domain=MS)
def _mha_verify(op: OnnxOp):
    n = _heads(op)
    for i, name, ranks in ((0, "query", (3, 5)), (1, "key", (3, 4, 5)), (2, "value", (3, 4)),
                           (3, "bias", (1,)), (4, "key_padding_mask", (1, 2, 3)),
                           (5, "attention_bias", (4,)), (6, "past_key", (4,)),
                           (7, "past_value", (4,))):
        _rank(op, i, name, ranks)
    _same_elem(op, (1, 2, 3, 5, 6, 7), [MHA_INPUTS[i] for i in (1, 2, 3, 5, 6, 7)])
    if (op.input(6) is None) != (op.input(7) is None):
        op.fail("inputs 'past_key' and 'past_value' must be both present or both absent")
    k, v = op.input(1), op.input(2)
    kr, vr = op.rank(k), op.rank(v)
    if k is not None and kr != 5 and v is None:
        op.fail("input 'value' is required with a 3-D or 4-D key")
    if kr is not None and vr is not None and kr in (3, 4) and kr != vr:
        op.fail(f"key has rank {kr} but value has rank {vr}: expected the same")
    if kr == 4 and op.input(3) is not None:
        op.fail("input 'bias' must be absent when key is 4-D [B, N, L, H]")
    if kr == 4 and op.input(6) is not None:
        op.fail("inputs 'past_key'/'past_value' must be absent when key is 4-D [B, N, L, H]")
    dims = [_dims(op, i) for i in range(8)]
    if op.rank(op.input(0)) != 3 or kr not in (3, 4) or vr != kr or \
            any(dims[i] is None for i in range(8) if op.input(i) is not None):
        return
    mha_checks(D.inference_checks(op), n, *dims)


@shape_rule("MultiHeadAttention", 1, domain=MS)
def _mha_shape(op: OnnxOp):
    _mha_verify(op)
    n = op.attrs.num_heads
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    q, k, v = (op.shape(op.input(i)) for i in range(3))
    bsz = s = hd = hv = length = None
    if q is not None and len(q) == 3:
        bsz, s = q[0], q[1]
        hd = None if q[2] is None else q[2] // n
    if k is not None and v is not None and len(k) == len(v) == 3:
        length = k[1]
        hv = None if v[2] is None else v[2] // n
    elif k is not None and v is not None and len(k) == len(v) == 4:
        length, hv = k[2], v[3]
    p = 0
    if op.input(6) is not None:
        pk = op.shape(op.input(6))
        p = pk[2] if pk is not None and len(pk) == 4 else None
    t = None if p is None or length is None else p + length
    shapes = [(bsz, s, None if hv is None else n * hv), (bsz, n, t, hd), (bsz, n, t, hv),
              (bsz, n, s, t)]
    return [tensor(shapes[k], et) for k in result_slots(op)]


# -- Attention -----------------------------------------------------------------------

def attention_sizes(op: OnnxOp, width):
    """(D, D, Dv): the Q, K, V hidden sizes (qkv_hidden_sizes, or the weights'
    dim 1 split in three); ``width`` is that dim (int or UNKNOWN)."""
    sizes = op.attrs.qkv_hidden_sizes
    if sizes:
        if len(sizes) != 3:
            op.fail(f"attribute 'qkv_hidden_sizes' = {list(sizes)}: expected 3 values")
        return [int(x) for x in sizes]
    return [width // 3] * 3


def attention_checks(ctx: D.ShapeChecks, n: int, sizes, x, w, bias, mask, past, ab) -> None:
    """onnxruntime's Attention shape rules on dims (None: absent): x [B, S, Di],
    w [Di, D + D + Dv], bias [D + D + Dv], past [2, B, N, P, H], mask_index
    [B] / [2B], [B, T] (or [B or 1, 1]: no mask), [B, S, T]; attention_bias
    [B or 1, N or 1, S, T]."""
    bsz, s, di = x
    dq, dk, dv = sizes
    for name, hs in (("Q", dq), ("K", dk), ("V", dv)):
        ctx.require(D.both(D.gt(hs, 0), D.eq(hs % n, 0)), f"the {name} hidden size {{0}} is "
                    f"not a positive multiple of num_heads {n}", hs)
    ctx.require(D.eq(dq, dk), "the Q hidden size {0} differs from the K hidden size {1}", dq, dk)
    ctx.require(D.eq(w[0], di), "weights dim 0 is {0}: expected the input hidden size {1}",
                w[0], di)
    ctx.require(D.eq(w[1], dq + dk + dv), "weights dim 1 is {0}: expected D + D + Dv = {1}",
                w[1], dq + dk + dv)
    if bias is not None:
        ctx.require(D.eq(bias[0], dq + dk + dv), "bias has {0} elements: expected D + D + Dv "
                    "= {1}", bias[0], dq + dk + dv)
    p = 0
    if past is not None:
        ctx.require(D.eq(dk, dv), "with 'past', the K hidden size {0} must equal the V hidden "
                    "size {1}", dk, dv)
        ctx.require(D.eq(past[0], 2), "past dim 0 is {0}: expected 2", past[0])
        ctx.require(D.eq(past[1], bsz), "past dim 1 is {0}: expected the batch size {1}",
                    past[1], bsz)
        ctx.require(D.eq(past[2], n), f"past dim 2 is {{0}}: expected num_heads {n}", past[2])
        ctx.require(D.eq(past[4], dk // n), "past dim 4 is {0}: expected the head size {1}",
                    past[4], dk // n)
        p = past[3]
    t = p + s
    if mask is not None:
        if len(mask) == 1:
            ctx.require(D.either(D.eq(mask[0], bsz), D.eq(mask[0], 2 * bsz)),
                        "mask_index has {0} elements: expected the batch size {1} or twice it "
                        "(the (3 * B + 2) form is not supported)", mask[0], bsz)
        elif len(mask) == 2:
            raw = D.both(D.eq(mask[0], bsz), D.eq(mask[1], t))
            dummy = D.both(D.either(D.eq(mask[0], 1), D.eq(mask[0], bsz)), D.eq(mask[1], 1))
            ctx.require(D.either(raw, dummy), "mask_index has shape [{0}, {1}]: expected [B, T] "
                        "= [{2}, {3}] (or [B or 1, 1])", mask[0], mask[1], bsz, t)
        elif len(mask) == 3:
            ctx.require(D.eq(mask[0], bsz), "mask_index dim 0 is {0}: expected the batch "
                        "size {1}", mask[0], bsz)
            ctx.require(D.eq(mask[1], s), "mask_index dim 1 is {0}: expected the sequence "
                        "length {1}", mask[1], s)
            ctx.require(D.eq(mask[2], t), "mask_index dim 2 is {0}: expected the total "
                        "sequence length {1}", mask[2], t)
    if ab is not None:
        _bias_checks(ctx, ab, bsz, n, s, t)


@verifier("Attention", 1, domain=MS)
def _attention_verify(op: OnnxOp):
    n = _heads(op)
    for i, name, ranks in ((0, "input", (3,)), (1, "weights", (2,)), (2, "bias", (1,)),
                           (3, "mask_index", (1, 2, 3, 4)), (4, "past", (5,)),
                           (5, "attention_bias", (4,))):
        _rank(op, i, name, ranks)
    _same_elem(op, (1, 2, 4, 5), ("weights", "bias", "past", "attention_bias"))
    w = op.shape(op.input(1))
    sizes = attention_sizes(op, D.UNKNOWN if w is None or w[1] is None else w[1])
    dims = [_dims(op, i) for i in range(6)]
    if dims[0] is None or dims[1] is None or \
            any(dims[i] is None for i in range(2, 6) if op.input(i) is not None):
        return
    if dims[3] is not None and len(dims[3]) == 4:
        dims[3] = None          # the 4-D Megatron form: refused by the lowering
    attention_checks(D.inference_checks(op), n, sizes, *dims)


@shape_rule("Attention", 1, domain=MS)
def _attention_shape(op: OnnxOp):
    _attention_verify(op)
    n = op.attrs.num_heads
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    x, w = op.shape(op.input(0)), op.shape(op.input(1))
    bsz = s = None
    if x is not None:
        bsz, s = x[0], x[1]
    width = None if w is None else w[1]
    sizes = attention_sizes(op, D.UNKNOWN if width is None else width)
    dk, dv = (None if not D.is_static(z) else z for z in sizes[1:])
    p = 0
    if op.input(4) is not None:
        ps = op.shape(op.input(4))
        p = ps[3] if ps is not None and len(ps) == 5 else None
    t = None if p is None or s is None else p + s
    shapes = [(bsz, s, dv), (2, bsz, n, t, None if dk is None else dk // n)]
    return [tensor(shapes[k], et) for k in result_slots(op)]


# -- GroupQueryAttention -------------------------------------------------------------

GQA_INPUTS = ("query", "key", "value", "past_key", "past_value", "seqlens_k",
              "total_sequence_length", "cos_cache", "sin_cache", "position_ids",
              "attention_bias", "head_sink", "k_scale", "v_scale", "q_norm_weight",
              "k_norm_weight", "query_seqlens")


def gqa_checks(ctx: D.ShapeChecks, n: int, nkv: int, q, k, v, pk, pv, seqlens) -> None:
    """onnxruntime's GroupQueryAttention shape rules on dims (None: absent):
    q [B, S, N * H], k and v [B, S, Nkv * H], past [B, Nkv, P, H], seqlens_k [B]."""
    bsz, s, d = q
    ctx.require(D.eq(d % n, 0), f"query hidden size {{0}} is not a multiple of num_heads {n}", d)
    hd = d // n
    for name, x in (("key", k), ("value", v)):
        if x is None:
            continue
        ctx.require(D.eq(x[0], bsz), f"{name} dim 0 is {{0}}: expected the batch size {{1}}",
                    x[0], bsz)
        ctx.require(D.eq(x[1], s), f"{name} dim 1 is {{0}}: expected query's sequence length "
                    f"{{1}}", x[1], s)
        ctx.require(D.eq(x[2], nkv * hd), f"{name} dim 2 is {{0}}: expected kv_num_heads * "
                    f"head size = {{1}}", x[2], nkv * hd)
    for name, x in (("past_key", pk), ("past_value", pv)):
        if x is None:
            continue
        ctx.require(D.eq(x[0], bsz), f"{name} dim 0 is {{0}}: expected the batch size {{1}}",
                    x[0], bsz)
        ctx.require(D.eq(x[1], nkv), f"{name} dim 1 is {{0}}: expected kv_num_heads {nkv}",
                    x[1])
        ctx.require(D.eq(x[3], hd), f"{name} dim 3 is {{0}}: expected the head size {{1}}",
                    x[3], hd)
    if pk is not None and pv is not None:
        ctx.require(D.eq(pv[2], pk[2]), "past_value dim 2 is {0}: expected past_key's {1}",
                    pv[2], pk[2])
    ctx.require(D.eq(seqlens[0], bsz), "seqlens_k has {0} elements: expected the batch "
                "size {1}", seqlens[0], bsz)


@verifier("GroupQueryAttention", 1, domain=MS)
def _gqa_verify(op: OnnxOp):
    n, nkv = _heads(op), _heads(op, "kv_num_heads")
    if n % nkv:
        op.fail(f"num_heads {n} is not a multiple of kv_num_heads {nkv}")
    for i, name, ranks in ((0, "query", (3,)), (1, "key", (3,)), (2, "value", (3,)),
                           (3, "past_key", (4,)), (4, "past_value", (4,)), (5, "seqlens_k", (1,)),
                           (6, "total_sequence_length", (0, 1))):
        _rank(op, i, name, ranks)
    ts = op.shape(op.input(6))
    if ts is not None and len(ts) == 1 and ts[0] is not None and ts[0] != 1:
        op.fail(f"input 'total_sequence_length' has shape {fmt(ts)}: expected one element")
    if (op.input(1) is None) != (op.input(2) is None):
        op.fail("inputs 'key' and 'value' must be both present or both absent")
    if (op.input(3) is None) != (op.input(4) is None):
        op.fail("inputs 'past_key' and 'past_value' must be both present or both absent")
    _same_elem(op, (1, 2), ("key", "value"))
    dims = [_dims(op, i) for i in range(6)]
    if op.input(1) is None or dims[0] is None or dims[5] is None or \
            any(dims[i] is None for i in range(1, 5) if op.input(i) is not None):
        return
    gqa_checks(D.inference_checks(op), n, nkv, *dims)


def gqa_present_len(op: OnnxOp):
    """max(total_sequence_length, P) when both are known, else None."""
    ts = const_ints(op.input(6))
    p = 0
    if op.input(3) is not None:
        ps = op.shape(op.input(3))
        p = ps[2] if ps is not None and len(ps) == 4 else None
    if ts is None or len(ts) != 1 or p is None:
        return None
    return max(ts[0], p)


@shape_rule("GroupQueryAttention", 1, domain=MS)
def _gqa_shape(op: OnnxOp):
    _gqa_verify(op)
    n, nkv = op.attrs.num_heads, op.attrs.kv_num_heads
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    q = op.shape(op.input(0))
    bsz = s = hd = None
    if q is not None:
        bsz, s = q[0], q[1]
        if q[2] is not None:   # packed QKV (no key): [B, S, (N + 2 Nkv) H]
            hd = q[2] // n if op.input(1) is not None else q[2] // (n + 2 * nkv)
    tp = gqa_present_len(op)
    cache_et = op.elem(op.input(3)) if op.input(3) is not None else et
    shapes = [((bsz, s, None if hd is None else n * hd), et), ((bsz, nkv, tp, hd), cache_et),
              ((bsz, nkv, tp, hd), cache_et), ((bsz, n, s, tp), et)]
    return [tensor(*shapes[k]) for k in result_slots(op)]
