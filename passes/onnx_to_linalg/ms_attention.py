"""com.microsoft MultiHeadAttention, Attention, GroupQueryAttention -> the
ONNX Attention lowering's attention call (``attention.attention_call``: the
reference linalg function, the -O3 vector kernel).

Each op becomes: Q, K, V in [B, heads, seq, head] (one generic per tensor:
the head split, the transpose and the input bias in one), past and new keys
/ values concatenated (the present outputs), one additive f32 mask [B or 1,
N or 1, S, T] built from the op's masks (or none), then the call, and the
heads merged back to [B, S, N * Hv]. The masks follow onnxruntime's CPU
kernels:

* key padding / mask_index: a masked key adds ``mask_filter_value``
  (default -10000) to the scaled score; raw masks mask entries <= 0; 1-D
  masks are key lengths (Attention's [2B] form: ends, then starts);
* causal (``unidirectional``): query i sees keys j <= P + i, a later key
  gets the lowest f32 (it replaces the padding value there); as onnxruntime,
  the last query row is not masked (the same for self attention, where it
  sees every key anyway; with more keys than queries, cross attention, it
  sees all of them);
* attention_bias is added on top (broadcast over batch / heads).

GroupQueryAttention (the LLM KV-cache form): per batch b, T_b = seqlens_k[b]
+ 1 keys, P_b = T_b - S of them from the past (0 for the first prompt,
S == total_sequence_length); the present buffers [B, Nkv, max(total, P), H]
hold past[:P_b] then the S new keys (zeros after), query i sees keys
j <= P_b + i, j < T_b (and j > P_b + i - local_window_size); rotary
(do_rotary) rotates Q and K at positions P_b + s with cos/sin_cache rows.
The query heads of a group share a kv head (the call's head group).
"""
from __future__ import annotations

import math

import mlir.ir as ir
from mlir.dialects import arith, scf, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_attention import (GQA_INPUTS, MHA_INPUTS, MS,
                                                          attention_checks, attention_sizes,
                                                          gqa_checks, mha_checks)
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.passes.onnx_to_linalg.attention import attention_call
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, val
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal, checks
from onnx_mlir_py.passes.onnx_to_linalg.gemm import matmul2d
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse, expand
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, iadd, insert_slice,
                                                            isub, loop_index, to_index)

F32_LOWEST = -3.4028234663852886e38
CI = arith.CmpIPredicate


def _f32(v) -> bool:
    return v is not None and isinstance(v.type, ir.RankedTensorType) and \
        isinstance(v.type.element_type, ir.F32Type)


def _static(op: OnnxOp, v, k: int, what: str) -> int:
    if v.type.is_dynamic_dim(k):
        op.fail(f"{what} must be static (dim {k} of {v.type})")
    return int(v.type.shape[k])


def _ix(b: LoweringContext, v):
    return None if v is None else b.ixdims(v)


def _scale(op: OnnxOp, hd: int) -> float:
    s = op.attrs.scale
    return 1.0 / math.sqrt(hd) if s is None or s == 0.0 else float(s)


def _aff(*terms) -> ir.AffineExpr:
    """sum of (dim, coefficient) / int terms as an affine expression."""
    e = None
    for t in terms:
        if isinstance(t, int):
            x = ir.AffineConstantExpr.get(t)
        else:
            d, c = t
            x = ir.AffineDimExpr.get(d)
            if c != 1:
                x = ir.AffineMulExpr.get(x, ir.AffineConstantExpr.get(c))
        e = x if e is None else ir.AffineAddExpr.get(e, x)
    return e


def to_heads(b: LoweringContext, x, n: int, hd: int, bias=None, off: int = 0, col: int = 0):
    """x[:, :, col : col + n * hd] [B, S, n * hd] (+ bias[off : off + n * hd])
    -> [B, n, S, hd]."""
    bsz, s = b.dim(x, 0), b.dim(x, 1)
    out = b.empty([bsz, n, s, hd], x.type.element_type)
    maps = [ir.AffineMap.get(4, 0, [_aff((0, 1)), _aff((2, 1)),
                                    _aff((1, hd), (3, 1), *([col] if col else []))])]
    ins = [x]
    if bias is not None:
        ins.append(bias)
        maps.append(ir.AffineMap.get(4, 0, [_aff((1, hd), (3, 1), *([off] if off else []))]))
    maps.append(affine_map(4, [0, 1, 2, 3]))
    if bias is None:
        return b.generic(ins, [out], maps, ["parallel"] * 4, lambda a, _o: a)[0]
    return b.generic(ins, [out], maps, ["parallel"] * 4, lambda a, c, _o: arith.addf(a, c))[0]


def from_heads(b: LoweringContext, y4):
    """[B, N, S, Hv] -> [B, S, N * Hv]."""
    bsz, n, s, hv = b.dims(y4)
    t = val(linalg.transpose(y4, outs=[b.empty([bsz, s, n, hv], y4.type.element_type)],
                             permutation=[0, 2, 1, 3]))
    out_t = b.type_of([bsz, s, n * hv], y4.type.element_type)
    return collapse(t, [[0], [1], [2, 3]], out_t)


def concat_seq(b: LoweringContext, past, new):
    """[B, N, P, H] ++ [B, N, L, H] along dim 2."""
    pd, nd = b.dims(past), b.dims(new)
    out = b.empty([nd[0], nd[1], iadd(b, pd[2], nd[2]), nd[3]], new.type.element_type)
    out = insert_slice(past, out, [0, 0, 0, 0], [nd[0], nd[1], pd[2], nd[3]])
    return insert_slice(new, out, [0, 0, pd[2], 0], nd)


def _bcast_flags(b: LoweringContext, v, full: list) -> list:
    """Per dim of v: True (read index 0: statically 1 where ``full`` is not),
    False (the loop index) or a run-time i1 (its dim is 1)."""
    out = []
    for k, f in enumerate(full):
        if v.type.is_dynamic_dim(k):
            out.append(arith.cmpi(CI.eq, b.dim(v, k), b.index(1)))
        else:
            out.append(v.type.shape[k] == 1 and f != 1)
    return out


def _bcast_at(b: LoweringContext, flag, idx):
    if isinstance(flag, bool):
        return b.index(0) if flag else idx
    return arith.select(flag, b.index(0), idx)


def build_mask(b: LoweringContext, dims: list, value):
    """An f32 [dims] tensor whose element (b, h, i, j) is ``value(b, h, i, j)``
    (index Values; called inside the generic's body)."""
    f32 = ir.F32Type.get()
    init = b.empty(dims, f32)
    return b.generic([], [init], [affine_map(4, [0, 1, 2, 3])], ["parallel"] * 4,
                     lambda _o: value(*[loop_index(k) for k in range(4)]))[0]


def padding_mask(b: LoweringContext, qd: list, t, p, n: int, kpm, filt: float,
                 causal, ab, kpm_kind: str, whole: bool = False):
    """The additive mask of MultiHeadAttention / Attention (None: no mask):
    ``kpm_kind`` "len" ([B] key lengths), "len2" ([2B]: ends then starts,
    or [B] at run time), "raw" ([B, T] 0/1), "raw3" ([B, S, T]),
    "raw_or_dummy" ([B, T], or [B or 1, 1] = no mask at run time); ``causal``:
    query i < S - 1 does not see keys j > P + i; ``ab`` [B or 1, N or 1, S, T].
    ``whole``: always a built mask (dims statically 1 or the scores')."""
    bsz, s = qd[0], qd[2]
    if kpm is None and not causal and (ab is None or not whole):
        return ab            # the bias alone is the mask (the call broadcasts it)
    f32 = ir.F32Type.get()
    bm = bsz if kpm is not None or (ab is not None and not (
        not ab.type.is_dynamic_dim(0) and ab.type.shape[0] == 1)) else 1
    nm = n if ab is not None and not (not ab.type.is_dynamic_dim(1) and ab.type.shape[1] == 1) \
        else 1
    zero, fv, low = (arith.constant(f32, x) for x in (0.0, filt, F32_LOWEST))
    i32 = ir.IntegerType.get_signless(32)
    pre = {}
    if kpm_kind == "len2":
        mlen = b.as_index(b.dim(kpm, 0))
        pre["two"] = arith.cmpi(CI.ne, mlen, b.as_index(bsz))     # [2B] at run time
    if kpm_kind == "raw_or_dummy":
        pre["raw"] = arith.andi(
            arith.cmpi(CI.eq, b.as_index(b.dim(kpm, 0)), b.as_index(bsz)),
            arith.cmpi(CI.eq, b.as_index(b.dim(kpm, 1)), b.as_index(t)))
        pre["last0"], pre["last1"] = (isub(b, b.as_index(b.dim(kpm, k)), 1) for k in (0, 1))
    if causal:
        pre["p"] = b.as_index(p)
        pre["s1"] = isub(b, b.as_index(s), 1)
    ab_flags = _bcast_flags(b, ab, [bm, nm]) if ab is not None else None

    def value(bi, hi, i, j):
        v = zero
        if kpm is not None:
            if kpm_kind in ("len", "len2"):
                end = to_index(tensor.extract(kpm, [bi]))
                masked = arith.cmpi(CI.sge, j, end)
                if kpm_kind == "len2":
                    si = arith.select(pre["two"], arith.addi(bi, b.as_index(bsz)), bi)
                    start = to_index(tensor.extract(kpm, [si]))
                    before = arith.andi(pre["two"], arith.cmpi(CI.slt, j, start))
                    masked = arith.ori(masked, before)
            else:
                if kpm_kind == "raw3":
                    m = tensor.extract(kpm, [bi, i, j])
                elif kpm_kind == "raw":
                    m = tensor.extract(kpm, [bi, j])
                else:     # a [B or 1, 1] dummy reads in bounds and is ignored
                    m = tensor.extract(kpm, [arith.minsi(bi, pre["last0"]),
                                             arith.minsi(j, pre["last1"])])
                masked = arith.cmpi(CI.sle, m, arith.constant(i32, 0))
                if kpm_kind == "raw_or_dummy":
                    masked = arith.andi(masked, pre["raw"])
            v = arith.select(masked, fv, v)
        if "p" in pre:
            # onnxruntime masks rows i < S - 1 only (the last row sees every key)
            fut = arith.andi(arith.cmpi(CI.sgt, j, arith.addi(pre["p"], i)),
                             arith.cmpi(CI.slt, i, pre["s1"]))
            v = arith.select(fut, low, v)
        if ab is not None:
            idx = [_bcast_at(b, ab_flags[0], bi), _bcast_at(b, ab_flags[1], hi), i, j]
            v = arith.addf(tensor.extract(ab, idx), v)
        return v
    return build_mask(b, [bm, nm, s, t], value)


def _causal_flag(op: OnnxOp, s) -> bool:
    """unidirectional, unless the query has a single position (static)."""
    return bool(op.attrs.unidirectional) and not (isinstance(s, int) and s == 1)


def _results(op: OnnxOp, b: LoweringContext, by_slot: dict) -> list:
    return [b.cast_to(by_slot[k], b.result_type(op, i))
            for i, k in enumerate(result_slots(op))]


# -- MultiHeadAttention ------------------------------------------------------------

def mha_unsupported(op: OnnxOp) -> str | None:
    q, k, v = op.input(0), op.input(1), op.input(2)
    if k is None or op.rank(q) == 5:
        return "packed QKV (no key input) is not supported"
    if op.rank(k) == 5:
        return "packed KV (a 5-D key) is not supported"
    for i in (8, 9):
        if op.input(i) is not None:
            return f"input '{MHA_INPUTS[i]}' is not supported (no buffer sharing or beam search)"
    if not all(_f32(x) for x in (q, k, v)):
        return "only float32 is supported (as onnxruntime's CPU kernel)"
    if op.rank(q) != 3 or op.rank(k) not in (3, 4) or op.rank(v) != op.rank(k):
        return "query must be 3-D and key, value both 3-D or both 4-D"
    kpm = op.input(4)
    if kpm is not None and op.rank(kpm) == 1 and not kpm.type.is_dynamic_dim(0) \
            and op.shape(q)[0] is not None and kpm.type.shape[0] != op.shape(q)[0]:
        return "key_padding_mask of shape [3 * B + 2] is not supported"
    return None


@lowering("MultiHeadAttention", 1, domain=MS)
def lower_mha(op: OnnxOp, b: LoweringContext):
    why = mha_unsupported(op)
    if why is not None:
        op.fail(why)
    q, k, v, bias, kpm, ab, pk, pv = (op.input(i) for i in range(8))
    n = op.attrs.num_heads
    mha_checks(checks(op, b), n, *[_ix(b, x) for x in (q, k, v, bias, kpm, ab, pk, pv)])
    d = _static(op, q, 2, "the query hidden size")
    hd = d // n
    if k.type.rank == 3:
        dv = _static(op, v, 2, "the value hidden size")
        hv = dv // n
        qh = to_heads(b, q, n, hd, bias, 0)
        kh = to_heads(b, k, n, hd, bias, d)
        vh = to_heads(b, v, n, hv, bias, 2 * d)
    else:
        hv = _static(op, v, 3, "the value head size")
        _static(op, k, 3, "the key head size")
        qh = to_heads(b, q, n, hd, bias, 0)
        kh, vh = b.cast_to(k, b.type_of([b.dim(k, 0), n] + b.dims(k)[2:], k.type.element_type)), \
            b.cast_to(v, b.type_of([b.dim(v, 0), n] + b.dims(v)[2:], v.type.element_type))
    p = 0
    if pk is not None:
        p = b.dim(pk, 2)
        kh, vh = concat_seq(b, pk, kh), concat_seq(b, pv, vh)
    qd = b.dims(qh)
    t = b.dim(kh, 2)
    kind = None
    if kpm is not None:
        kind = {1: "len", 2: "raw", 3: "raw3"}[kpm.type.rank]
    filt = op.attrs.mask_filter_value
    filt = -10000.0 if filt is None else float(filt)
    want_qk = 3 in result_slots(op)
    mask = padding_mask(b, qd, t, p, n, kpm, filt, _causal_flag(op, qd[2]), ab, kind, want_qk)
    scale = _scale(op, hd)
    y4 = attention_call(op, b, qh, kh, vh, mask, scale, 1, mask_exact=mask is not ab)
    by_slot = {0: from_heads(b, y4), 1: kh, 2: vh}
    if want_qk:
        by_slot[3] = scores(b, qh, kh, mask, scale)
    return _results(op, b, by_slot)


def scores(b: LoweringContext, qh, kh, mask, scale: float):
    """The scaled scores with the mask added, [B, N, S, T] (MultiHeadAttention's
    output qk: before the softmax); ``mask`` None or with dims 1 or the scores'."""
    f32 = ir.F32Type.get()
    bsz, n, s, _ = b.dims(qh)
    t = b.dim(kh, 2)
    acc = b.full([bsz, n, s, t], f32, 0.0)
    qk = b.generic([qh, kh], [acc], [affine_map(5, [0, 1, 2, 4]), affine_map(5, [0, 1, 3, 4]),
                                     affine_map(5, [0, 1, 2, 3])],
                   ["parallel"] * 4 + ["reduction"],
                   lambda x, y, o: arith.addf(o, arith.mulf(x, y)))[0]
    sc = arith.constant(f32, scale)
    out = b.empty([bsz, n, s, t], f32)
    ident = affine_map(4, [0, 1, 2, 3])
    if mask is None:
        return b.generic([qk], [out], [ident, ident], ["parallel"] * 4,
                         lambda x, _o: arith.mulf(x, sc))[0]
    full = [bsz, n, s, t]
    mmap = affine_map(4, ["0" if not mask.type.is_dynamic_dim(k) and mask.type.shape[k] == 1
                          and full[k] != 1 else k for k in range(4)])
    return b.generic([qk, mask], [out], [ident, mmap, ident], ["parallel"] * 4,
                     lambda x, m, _o: arith.addf(arith.mulf(x, sc), m))[0]


lower_mha.unsupported = mha_unsupported


# -- Attention -----------------------------------------------------------------------

def attention_unsupported(op: OnnxOp) -> str | None:
    x, w = op.input(0), op.input(1)
    if op.attrs.do_rotary:
        return "do_rotary is not supported (as onnxruntime's CPU kernel)"
    if op.attrs.past_present_share_buffer:
        return "past_present_share_buffer is not supported"
    if op.input(6) is not None:
        return "input 'past_sequence_length' is not supported (no buffer sharing)"
    if not all(_f32(v) for v in (x, w)):
        return "only float32 is supported (as onnxruntime's CPU kernel)"
    if op.rank(op.input(3)) == 4:
        return "a 4-D mask_index (Megatron) is not supported (as onnxruntime's CPU kernel)"
    if op.input(4) is not None and op.input(5) is not None:
        return "past and attention_bias together are not supported (as onnxruntime's CPU kernel)"
    if not op.attrs.qkv_hidden_sizes and w.type.is_dynamic_dim(1):
        return "the weights' dim 1 must be static (or qkv_hidden_sizes given)"
    return None


@lowering("Attention", 1, domain=MS)
def lower_ms_attention(op: OnnxOp, b: LoweringContext):
    why = attention_unsupported(op)
    if why is not None:
        op.fail(why)
    x, w, bias, mask, past, ab = (op.input(i) for i in range(6))
    n = op.attrs.num_heads
    width = b.dim(w, 1)
    sizes = attention_sizes(op, width)
    attention_checks(checks(op, b), n, sizes, *[_ix(b, v) for v in (x, w, bias, mask, past, ab)])
    dq, _dk, dv = sizes
    hd, hv = dq // n, dv // n
    bsz, s, di = b.dims(x)
    f32 = ir.F32Type.get()
    # QKV [B, S, D + D + Dv] = input @ weights (one matmul over B * S rows)
    dyn = ir.ShapedType.get_dynamic_size()
    rows = bsz * s if isinstance(bsz, int) and isinstance(s, int) else dyn
    x2 = collapse(x, [[0, 1], [2]],
                  ir.RankedTensorType.get([rows, di if isinstance(di, int) else dyn], f32))
    qkv = expand(b, val(matmul2d(b, x2, w, f32)), [[0, 1], [2]], [bsz, s, width])
    qh = to_heads(b, qkv, n, hd, bias, 0, 0)
    kh = to_heads(b, qkv, n, hd, bias, dq, dq)
    vh = to_heads(b, qkv, n, hv, bias, 2 * dq, 2 * dq)
    p = 0
    if past is not None:
        pd = b.dims(past)
        p = pd[3]
        pk = extract_slice(b, past, [0, 0, 0, 0, 0], [1] + pd[1:])
        pv = extract_slice(b, past, [1, 0, 0, 0, 0], [1] + pd[1:])
        pk, pv = (tensor.collapse_shape(b.type_of(pd[1:], f32), z, _groups5()) for z in (pk, pv))
        kh, vh = concat_seq(b, pk, kh), concat_seq(b, pv, vh)
    qd = b.dims(qh)
    t = b.dim(kh, 2)
    kind = None
    if mask is not None:
        r = mask.type.rank
        kind = "raw3" if r == 3 else ("len2" if r == 1 else _mask2_kind(mask, bsz, t))
        if kind is None:
            mask = None         # a [B or 1, 1] dummy: no mask
    filt = op.attrs.mask_filter_value
    filt = -10000.0 if filt is None else float(filt)
    m = padding_mask(b, qd, t, p, n, mask, filt, _causal_flag(op, s), ab, kind)
    y4 = attention_call(op, b, qh, kh, vh, m, _scale(op, hd), 1, mask_exact=m is not ab)
    by_slot = {0: from_heads(b, y4)}
    if 1 in result_slots(op):
        kd = b.dims(kh)
        pres = b.empty([2] + kd, f32)
        for z, off in ((kh, 0), (vh, 1)):
            z5 = tensor.expand_shape(b.type_of([1] + kd, f32), z, _groups5(),
                                     [d for d in kd if not isinstance(d, int)],
                                     [1] + [d if isinstance(d, int) else
                                            ir.ShapedType.get_dynamic_size() for d in kd])
            pres = insert_slice(z5, pres, [off, 0, 0, 0, 0], [1] + kd)
        by_slot[1] = pres
    return _results(op, b, by_slot)


lower_ms_attention.unsupported = attention_unsupported


def _wrap(p):
    return IxVal(p) if isinstance(p, ir.Value) else p


def _groups5():
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, j) for j in g])
                             for g in ([0, 1], [2], [3], [4])])


def _mask2_kind(mask, bsz, t) -> str | None:
    """A 2-D mask_index: "raw" ([B, T]), None (statically a [B or 1, 1] dummy)
    or "raw_or_dummy" (decided at run time)."""
    m0 = None if mask.type.is_dynamic_dim(0) else mask.type.shape[0]
    m1 = None if mask.type.is_dynamic_dim(1) else mask.type.shape[1]
    if m1 is not None and isinstance(t, int):
        if m1 == t and (m0 is not None and isinstance(bsz, int) and m0 == bsz):
            return "raw"
        if m1 == 1 and m1 != t:
            return None
    if m1 is not None and m1 != 1:
        return "raw"
    return "raw_or_dummy"


# -- GroupQueryAttention -------------------------------------------------------------

def gqa_unsupported(op: OnnxOp) -> str | None:
    q, k = op.input(0), op.input(1)
    if k is None:
        return "packed QKV (no key input) is not supported"
    for i in range(9, len(GQA_INPUTS)):
        if op.input(i) is not None:
            return f"input '{GQA_INPUTS[i]}' is not supported"
    a = op.attrs
    if a.causal != 1:
        return "causal = 0 is not supported"
    if a.softcap:
        return "softcap is not supported"
    if a.smooth_softmax == 1:
        return "smooth_softmax is not supported"
    if a.qk_output or 3 in result_slots(op):
        return "qk_output / output 'output_qk' is not supported"
    if (a.k_quant_type or "NONE") != "NONE" or (a.v_quant_type or "NONE") != "NONE" or \
            a.kv_cache_bit_width:
        return "a quantized KV cache is not supported"
    if a.sliding_window_cache:
        return "sliding_window_cache is not supported"
    lw = a.local_window_size
    if lw is not None and lw != -1 and lw < 1:
        return f"local_window_size = {lw} is not supported (-1 or a positive window)"
    vals = [op.input(i) for i in (0, 1, 2, 3, 4)]
    if not all(_f32(x) for x in vals if x is not None):
        return "only float32 query, key, value and KV cache are supported"
    if a.do_rotary:
        cos, sin = op.input(7), op.input(8)
        if cos is None or sin is None:
            return "do_rotary needs cos_cache and sin_cache"
        if not (_f32(cos) and _f32(sin)) or op.rank(cos) != 2 or op.rank(sin) != 2:
            return "cos_cache and sin_cache must be 2-D float32"
        if cos.type.is_dynamic_dim(1):
            return "the rotary dim (cos_cache dim 1) must be static"
    return None


def _minmax(b: LoweringContext, sl, bsz):
    """(min, max) of the i32 vector sl as index Values (a loop)."""
    i32 = ir.IntegerType.get_signless(32)
    big = arith.constant(i32, 2 ** 31 - 1)
    small = arith.constant(i32, -2 ** 31)
    loop = scf.ForOp(b.index(0), b.as_index(bsz), b.index(1), [big, small])
    with ir.InsertionPoint(loop.body):
        x = tensor.extract(sl, [loop.induction_variable])
        mn, mx = loop.inner_iter_args
        scf.YieldOp([arith.minsi(mn, x), arith.maxsi(mx, x)])
    return to_index(loop.results[0]), to_index(loop.results[1])


def _rotary(b: LoweringContext, x4, cos, sin, pos, interleaved: bool):
    """x4 [B, n, S, H] rotated at positions pos(b, s) (index) by the first
    2 * cos dim 1 entries of each head (onnxruntime's RotaryEmbedding)."""
    half = int(cos.type.shape[1])
    rd = 2 * half

    def body(xv, _o):
        bi, hi, si, di = (loop_index(k) for k in range(4))
        p = pos(bi, si)
        c_half, c_rd = b.index(half), b.index(rd)
        rot = arith.cmpi(CI.slt, di, c_rd)
        if interleaved:
            ci = arith.divui(di, b.index(2))
            odd = arith.cmpi(CI.ne, arith.remui(di, b.index(2)), b.index(0))
            partner = arith.select(odd, arith.subi(di, b.index(1)), arith.addi(di, b.index(1)))
            first = arith.xori(odd, arith.constant(ir.IntegerType.get_signless(1), 1))
        else:
            first = arith.cmpi(CI.slt, di, c_half)
            ci = arith.select(first, di, arith.subi(di, c_half))
            partner = arith.select(first, arith.addi(di, c_half), arith.subi(di, c_half))
        # outside the rotary dims the reads stay in bounds and are not used
        ci = arith.select(rot, ci, b.index(0))
        partner = arith.select(rot, partner, di)
        c = tensor.extract(cos, [p, ci])
        s = tensor.extract(sin, [p, ci])
        other = tensor.extract(x4, [bi, hi, si, partner])
        # first of a pair: x cos - y sin; second: x cos + y sin (y its partner)
        ys = arith.mulf(other, s)
        r = arith.select(first, arith.subf(arith.mulf(xv, c), ys),
                         arith.addf(arith.mulf(xv, c), ys))
        return arith.select(rot, r, xv)
    ident = affine_map(4, [0, 1, 2, 3])
    return b.generic([x4], [b.empty(b.dims(x4), x4.type.element_type)], [ident, ident],
                     ["parallel"] * 4, body)[0]


@lowering("GroupQueryAttention", 1, domain=MS)
def lower_gqa(op: OnnxOp, b: LoweringContext):
    why = gqa_unsupported(op)
    if why is not None:
        op.fail(why)
    q, k, v, pk, pv, sl, ts = (op.input(i) for i in range(7))
    n, nkv = op.attrs.num_heads, op.attrs.kv_num_heads
    chk = checks(op, b)
    gqa_checks(chk, n, nkv, *[_ix(b, x) for x in (q, k, v, pk, pv, sl)])
    d = _static(op, q, 2, "the query hidden size")
    hd = d // n
    f32 = ir.F32Type.get()
    bsz, s = b.dim(q, 0), b.dim(q, 1)
    s_ix = b.as_index(s)
    qh, kh, vh = to_heads(b, q, n, hd), to_heads(b, k, nkv, hd), to_heads(b, v, nkv, hd)
    p = b.dim(pk, 2) if pk is not None else 0
    if ts.type.rank == 1:
        chk.require(D.eq(b.ixdim(ts, 0), 1), "total_sequence_length has {0} elements: "
                    "expected 1", b.ixdim(ts, 0))
    total = to_index(tensor.extract(ts, [b.index(0)] * ts.type.rank))
    tp = arith.maxsi(total, b.as_index(p))
    first = arith.cmpi(CI.eq, s_ix, total)
    mn, mx = _minmax(b, sl, bsz)
    s_d, mn_d, mx_d, p_d = IxVal(s_ix), IxVal(mn), IxVal(mx), _wrap(p)
    tot_d = IxVal(total)
    chk.require(D.either(D.eq(tot_d, p_d + s_d), D.le(tot_d, p_d)),
                "total_sequence_length {0} must be past + new length ({1} + {2}) or, for a "
                "static cache, at most the past buffer length", tot_d, p_d, s_d)
    chk.require(D.ge(mn_d, 0), "seqlens_k has a negative entry {0}", mn_d)
    # after the first prompt: T_b - S past keys exist (0 <= P_b <= P) and T_b <= the buffer
    fits = D.both(D.ge(mn_d + 1, s_d), D.both(D.le(mx_d + 1 - s_d, p_d),
                                             D.le(mx_d + 1, IxVal(tp))))
    chk.require(D.either(D.eq(s_d, tot_d), fits),
                "seqlens_k (min {0}, max {1}) does not fit the sequence length {2} and the past "
                "length {3}: seqlens_k[b] + 1 - S past keys must be in the past buffer",
                mn_d, mx_d, s_d, p_d)

    def past_len(bi):
        """P_b = seqlens_k[b] + 1 - S (0 for the first prompt)."""
        tb = arith.addi(to_index(tensor.extract(sl, [bi])), b.index(1))
        return arith.select(first, b.index(0), arith.subi(tb, s_ix))

    if op.attrs.do_rotary:
        cos, sin = op.input(7), op.input(8)
        half = int(cos.type.shape[1])
        if 2 * half > hd:
            op.fail(f"the rotary dim {2 * half} (2 * cos_cache dim 1) exceeds the head size {hd}")
        chk.require(D.eq(b.ixdim(sin, 1), half), f"sin_cache dim 1 is {{0}}: expected "
                    f"cos_cache's {half}", b.ixdim(sin, 1))
        chk.require(D.eq(b.ixdim(sin, 0), b.ixdim(cos, 0)), "sin_cache dim 0 is {0}: expected "
                    "cos_cache's {1}", b.ixdim(sin, 0), b.ixdim(cos, 0))
        last = arith.select(first, s_ix, arith.addi(mx, b.index(1)))   # 1 + the last position
        chk.require(D.le(IxVal(last), b.ixdim(cos, 0)), "rotary positions up to {0} - 1 need "
                    "{0} cos_cache rows, it has {1}", IxVal(last), b.ixdim(cos, 0))

        def pos(bi, si):
            return arith.addi(past_len(bi), si)
        inter = bool(op.attrs.rotary_interleaved)
        qh, kh = _rotary(b, qh, cos, sin, pos, inter), _rotary(b, kh, cos, sin, pos, inter)
    pres = []
    for past, new in ((pk, kh), (pv, vh)):
        buf = b.full([bsz, nkv, tp, hd], f32, 0.0)
        loop = scf.ForOp(b.index(0), b.as_index(bsz), b.index(1), [buf])
        with ir.InsertionPoint(loop.body):
            bi = loop.induction_variable
            acc = loop.inner_iter_args[0]
            pb = past_len(bi)
            if past is not None and p != 0:
                part = extract_slice(b, past, [bi, 0, 0, 0], [1, nkv, pb, hd])
                acc = insert_slice(part, acc, [bi, 0, 0, 0], [1, nkv, pb, hd])
            part = extract_slice(b, new, [bi, 0, 0, 0], [1, nkv, s, hd])
            acc = insert_slice(part, acc, [bi, 0, pb, 0], [1, nkv, s, hd])
            scf.YieldOp([acc])
        pres.append(loop.results[0])
    lw = op.attrs.local_window_size
    lw = -1 if lw is None else lw
    zero, ninf = arith.constant(f32, 0.0), arith.constant(f32, float("-inf"))

    def value(bi, _hi, i, j):
        pb = past_len(bi)
        tb = arith.addi(to_index(tensor.extract(sl, [bi])), b.index(1))
        last = arith.addi(pb, i)
        ok = arith.andi(arith.cmpi(CI.sle, j, last), arith.cmpi(CI.slt, j, tb))
        if lw > 0:
            ok = arith.andi(ok, arith.cmpi(CI.sgt, j, arith.subi(last, b.index(lw))))
        return arith.select(ok, zero, ninf)
    mask = build_mask(b, [bsz, 1, s, tp], value)
    y4 = attention_call(op, b, qh, pres[0], pres[1], mask, _scale(op, hd), n // nkv,
                        mask_exact=True)
    return _results(op, b, {0: from_heads(b, y4), 1: pres[0], 2: pres[1]})


lower_gqa.unsupported = gqa_unsupported
