"""com.microsoft MultiHeadAttention, Attention and GroupQueryAttention against
onnxruntime (the oracle for contrib ops), compiled once per -O level with
dynamic batch and sequence dims and run at two shapes each: input bias,
cross attention (3-D and 4-D keys), key padding masks (key lengths, raw
[B, T] and [B, S, T] masks, Attention's [2B] and dummy forms),
unidirectional with past / present (a prefill and a decode step) and the
qk output, attention_bias broadcast over batch or heads; GroupQueryAttention's
prompt and decode steps on a KV cache (ragged seqlens_k, a static cache
longer than needed, a padded prompt, a later prompt chunk), local windows and
rotary (interleaved or not, full or partial); and the refusals (at compile
time, and the run-time checks). Head size 16 at -O3: the vector attention
kernel takes the calls (asserted on the -O3 kernel plan, which is why
``_check`` compiles with ``run_pipeline`` rather than ``check_shapes``)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, model

import onnx_mlir_py

R = np.random.default_rng(0)
F = T.FLOAT
OPT = [0, 3]


def _f(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _model(op, ins, inputs, outs, **attrs):
    node = h.make_node(op, ins, outs, domain="com.microsoft", name="att", **attrs)
    return model([node], inputs, [(o, F, None) for o in outs if o], ms_opset=1)


def _check(tmp_path, m, feeds, opt, tol=2e-5, kernel=True, ref_model=None, ref_feeds=None):
    """Compile once at ``opt``; each feed set must match onnxruntime (running
    ``ref_model`` with ``ref_feeds`` added, if given). At -O3, ``kernel``: the
    kernel plan gives the attention calls to the vector kernel."""
    from onnx_mlir_py.compiler import run_pipeline
    from onnx_mlir_py.options import Options
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import reference
    plans = []
    so = run_pipeline(m, Options(opt_level=opt), str(tmp_path / "m.so"), on_plan=plans.append)
    if opt == 3:
        lines = [ln for p in plans for ln in p.lines()]
        assert any(" attention " in ln for ln in lines) == kernel, "\n".join(lines)
    sess = ExecutionSession(so)
    names = [i.name for i in m.graph.input]
    for f in feeds:
        got = sess.run([f[n] for n in names])
        want = reference(ref_model or m, {**f, **(ref_feeds or {})}, "onnxruntime")
        shapes = {k: v.shape for k, v in f.items()}
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (shapes, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=str(shapes))


# -- MultiHeadAttention --------------------------------------------------------------

N, H = 2, 16
D = N * H


@pytest.mark.parametrize("opt", OPT)
def test_mha_bias_cross(tmp_path, opt):
    """Cross attention (L != S), value hidden size != query's, input bias, a scale."""
    hv = 8
    m = _model("MultiHeadAttention", ["q", "k", "v", "bias"],
               [("q", F, ["b", "s", D]), ("k", F, ["b", "l", D]), ("v", F, ["b", "l", N * hv]),
                ("bias", F, [2 * D + N * hv])], ["y"], num_heads=N, scale=0.3)
    feeds = [dict(q=_f(b, s, D), k=_f(b, l, D), v=_f(b, l, N * hv), bias=_f(2 * D + N * hv))
             for b, s, l in ((2, 3, 5), (1, 4, 2))]
    _check(tmp_path, m, feeds, opt, kernel=False)   # value heads of 8: the reference body


def _kpm(kind, b, s, t):
    if kind == "len":
        return R.integers(1, t + 1, (b,)).astype(np.int32)
    shape = (b, t) if kind == "raw" else (b, s, t)
    m = R.integers(-1, 3, shape).astype(np.int32)   # entries <= 0 mask
    m[..., 0] = 1                                    # no fully masked row
    return m


@pytest.mark.parametrize("opt", OPT)
def test_mha_key_padding(tmp_path, opt):
    """Key lengths [B], raw masks [B, L] and [B, S, L] (entries <= 0 mask), one
    node each, with mask_filter_value."""
    kinds = {"len": ["b"], "raw": ["b", "l"], "raw3": ["b", "s", "l"]}
    ins = [("q", F, ["b", "s", D]), ("k", F, ["b", "l", D]), ("v", F, ["b", "l", D])] + \
        [(kind, T.INT32, shape) for kind, shape in kinds.items()]
    nodes = [h.make_node("MultiHeadAttention", ["q", "k", "v", "", kind], [f"y_{kind}"],
                         domain="com.microsoft", name=f"att_{kind}", num_heads=N,
                         mask_filter_value=-30.0) for kind in kinds]
    m = model(nodes, ins, [(f"y_{kind}", F, None) for kind in kinds], ms_opset=1)
    feeds = [dict(q=_f(b, s, D), k=_f(b, l, D), v=_f(b, l, D),
                  **{kind: _kpm(kind, b, s, l) for kind in kinds})
             for b, s, l in ((2, 3, 4), (3, 2, 6))]
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("opt", OPT)
def test_mha_causal_past_present(tmp_path, opt):
    """unidirectional with a KV cache: a prefill (S > 1) and a decode step
    (S = 1: no causal mask), key padding over the total length, presents and
    qk (the scaled, masked scores)."""
    m = _model("MultiHeadAttention", ["q", "k", "v", "bias", "m", "", "pk", "pv"],
               [("q", F, ["b", "s", D]), ("k", F, ["b", "s", D]), ("v", F, ["b", "s", D]),
                ("bias", F, [3 * D]), ("m", T.INT32, ["b", "t"]), ("pk", F, ["b", N, "p", H]),
                ("pv", F, ["b", N, "p", H])],
               ["y", "pk_out", "pv_out", "qk"], num_heads=N, unidirectional=1)
    feeds = [dict(q=_f(b, s, D), k=_f(b, s, D), v=_f(b, s, D), bias=_f(3 * D),
                  m=_kpm("raw", b, s, p + s), pk=_f(b, N, p, H), pv=_f(b, N, p, H))
             for b, s, p in ((2, 3, 2), (3, 1, 4))]
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("opt", OPT)
def test_mha_attention_bias_causal(tmp_path, opt):
    """attention_bias broadcast over batch ([1, N, S, L]) or heads ([B, 1, S, L]),
    with unidirectional and key lengths. Cross attention (L > S): as
    onnxruntime's CPU kernel, query i < S - 1 sees keys j <= i and the last
    query row every key."""
    shapes = {"ab_n": [1, N, "s", "l"], "ab_b": ["b", 1, "s", "l"]}
    ins = [("q", F, ["b", "s", D]), ("k", F, ["b", "l", D]), ("v", F, ["b", "l", D]),
           ("m", T.INT32, ["b"])] + [(k, F, shape) for k, shape in shapes.items()]
    nodes = [h.make_node("MultiHeadAttention", ["q", "k", "v", "", "m", k], [f"y_{k}"],
                         domain="com.microsoft", name=f"att_{k}", num_heads=N, unidirectional=1)
             for k in shapes]
    m = model(nodes, ins, [(f"y_{k}", F, None) for k in shapes], ms_opset=1)
    feeds = []
    for b, s, l in ((2, 3, 5), (1, 4, 4)):
        sizes = dict(b=b, s=s, l=l)
        feeds.append(dict(q=_f(b, s, D), k=_f(b, l, D), v=_f(b, l, D), m=_kpm("len", b, s, l),
                          **{k: _f(*[sizes.get(x, x) for x in shape])
                             for k, shape in shapes.items()}))
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("opt", OPT)
def test_mha_4d_key_value(tmp_path, opt):
    """Keys and values given per head [B, N, L, H] (a decoder's cross attention
    cache): the presents are them."""
    m = _model("MultiHeadAttention", ["q", "k", "v"],
               [("q", F, ["b", "s", D]), ("k", F, ["b", N, "l", H]), ("v", F, ["b", N, "l", H])],
               ["y", "pk_out", "pv_out"], num_heads=N)
    feeds = [dict(q=_f(b, s, D), k=_f(b, N, l, H), v=_f(b, N, l, H))
             for b, s, l in ((2, 3, 5), (1, 1, 3))]
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("what,node,match", [
    ("packed qkv", (["q"], ["y"]), "packed QKV"),
    ("share buffer", (["q", "k", "v", "", "", "", "pk", "pv", "psl"], ["y"]),
     "past_sequence_length' is not supported"),
    ("cache_indirection", (["q", "k", "v", "", "", "", "pk", "pv", "", "ci"], ["y"]),
     "cache_indirection' is not supported"),
])
def test_mha_refusals(tmp_path, what, node, match):
    inputs = [("q", F, [2, 3, D]), ("k", F, [2, 3, D]), ("v", F, [2, 3, D]),
              ("pk", F, [2, N, 4, H]), ("pv", F, [2, N, 4, H]), ("psl", T.INT32, [1]),
              ("ci", T.INT32, [2, 1, 8])]
    used = set(node[0])
    m = _model("MultiHeadAttention", node[0], [i for i in inputs if i[0] in used], node[1],
               num_heads=N)
    with pytest.raises(Exception, match=f"att.*MultiHeadAttention.*{match}"):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


def test_mha_bad_mask_length_at_run_time(tmp_path):
    """A [3 * B + 2] key_padding_mask (dynamic dim) stops the call naming the node."""
    m = _model("MultiHeadAttention", ["q", "k", "v", "", "m"],
               [("q", F, ["b", 3, D]), ("k", F, ["b", 3, D]), ("v", F, ["b", 3, D]),
                ("m", T.INT32, ["n"])], ["y"], num_heads=N)
    check_rejects(tmp_path, m, [dict(q=_f(2, 3, D), k=_f(2, 3, D), v=_f(2, 3, D),
                                     m=np.full(8, 3, np.int32))],
                  "att.*key_padding_mask dim 0 is 8: expected the batch size 2")


# -- Attention -----------------------------------------------------------------------

DI = 24          # the input hidden size (the weights may prune heads: Di != D)


@pytest.mark.parametrize("opt", OPT)
def test_attention_bert(tmp_path, opt):
    """The BERT form onnxruntime's optimizer writes: input @ weights + bias,
    key lengths [B] (its default mask format) or the raw [B, S] mask; a 3-D
    mask with attention_bias, scale and mask_filter_value; one model."""
    ins = [("x", F, ["b", "s", DI]), ("w", F, [DI, 3 * D]), ("bias", F, [3 * D]),
           ("len", T.INT32, ["b"]), ("raw", T.INT32, ["b", "s"]), ("m3", T.INT32, ["b", "s", "s"]),
           ("ab", F, [1, N, "s", "s"])]
    nodes = [h.make_node("Attention", ["x", "w", "bias", "len"], ["y1"], domain="com.microsoft",
                         name="a1", num_heads=N),
             h.make_node("Attention", ["x", "w", "bias", "raw"], ["y2"], domain="com.microsoft",
                         name="a2", num_heads=N),
             h.make_node("Attention", ["x", "w", "bias", "m3", "", "ab"], ["y3"],
                         domain="com.microsoft", name="a3", num_heads=N, scale=0.2,
                         mask_filter_value=-50.0)]
    m = model(nodes, ins, [(y, F, None) for y in ("y1", "y2", "y3")], ms_opset=1)
    feeds = [dict(x=_f(b, s, DI), w=_f(DI, 3 * D) * 0.3, bias=_f(3 * D), len=_kpm("len", b, s, s),
                  raw=_kpm("raw", b, s, s), m3=_kpm("raw3", b, s, s), ab=_f(1, N, s, s))
             for b, s in ((2, 3), (3, 5))]
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("opt", OPT)
def test_attention_gpt2_past(tmp_path, opt):
    """The GPT-2 form: unidirectional, past / present [2, B, N, P, H], the raw
    mask over past + new keys; a prefill step (S = 3) and a decode step (S = 1)."""
    m = _model("Attention", ["x", "w", "bias", "m", "past"],
               [("x", F, ["b", "s", DI]), ("w", F, [DI, 3 * D]), ("bias", F, [3 * D]),
                ("m", T.INT32, ["b", "t"]), ("past", F, [2, "b", N, "p", H])],
               ["y", "present"], num_heads=N, unidirectional=1)
    feeds = [dict(x=_f(b, s, DI), w=_f(DI, 3 * D) * 0.3, bias=_f(3 * D),
                  m=_kpm("raw", b, s, p + s), past=_f(2, b, N, p, H))
             for b, s, p in ((2, 3, 2), (3, 1, 5))]
    _check(tmp_path, m, feeds, opt)


@pytest.mark.parametrize("opt", OPT)
def test_attention_mask_forms(tmp_path, opt):
    """mask_index [2B] (ends, then starts), a [1, 1] dummy (no mask), no bias,
    qkv_hidden_sizes with a smaller V (heads of 8: the reference body at -O3)."""
    dv = N * 8
    ins = [("x", F, ["b", "s", DI]), ("w", F, [DI, 2 * D + dv]), ("ends", T.INT32, ["b2"]),
           ("dummy", T.INT32, [1, 1])]
    nodes = [h.make_node("Attention", ["x", "w", "", "ends"], ["y1"], domain="com.microsoft",
                         name="a1", num_heads=N, qkv_hidden_sizes=[D, D, dv]),
             h.make_node("Attention", ["x", "w", "", "dummy"], ["y2"], domain="com.microsoft",
                         name="a2", num_heads=N, qkv_hidden_sizes=[D, D, dv], unidirectional=1)]
    m = model(nodes, ins, [(y, F, None) for y in ("y1", "y2")], ms_opset=1)
    feeds = []
    for b, s in ((2, 4), (1, 3)):
        ends = R.integers(2, s + 1, (b,))
        starts = R.integers(0, 2, (b,))
        feeds.append(dict(x=_f(b, s, DI), w=_f(DI, 2 * D + dv) * 0.3,
                          ends=np.concatenate([ends, starts]).astype(np.int32),
                          dummy=np.zeros((1, 1), np.int32)))
    # onnxruntime's CPU kernel needs the bias: compare with a zero bias
    m_ref = model([h.make_node(n.op_type, [n.input[0], n.input[1], "zb"] + list(n.input[3:]),
                               list(n.output), domain="com.microsoft", name=n.name,
                               num_heads=N, qkv_hidden_sizes=[D, D, dv],
                               unidirectional=int(n.name == "a2")) for n in nodes],
                  ins + [("zb", F, [2 * D + dv])], [(y, F, None) for y in ("y1", "y2")],
                  ms_opset=1)
    _check(tmp_path, m, feeds, opt, kernel=False, ref_model=m_ref,
           ref_feeds=dict(zb=np.zeros(2 * D + dv, np.float32)))


@pytest.mark.parametrize("attrs,extra,match", [
    (dict(do_rotary=1), {}, "do_rotary is not supported"),
    (dict(past_present_share_buffer=1), {}, "past_present_share_buffer is not supported"),
    ({}, {"m4": [2, 1, 4, 4]}, "4-D mask_index"),
    ({}, {"past": [2, 2, N, 1, H], "ab": [1, N, 3, 4]}, "past and attention_bias together"),
])
def test_attention_refusals(tmp_path, attrs, extra, match):
    ins = [("x", F, [2, 3, DI]), ("w", F, [DI, 3 * D]), ("bias", F, [3 * D])]
    names = ["x", "w", "bias", "m4" if "m4" in extra else "", "past" if "past" in extra else "",
             "ab" if "ab" in extra else ""]
    for k, shape in extra.items():
        ins.append((k, T.INT32 if k == "m4" else F, shape))
    outs = ["y", "present"] if "past" in extra else ["y"]
    m = _model("Attention", names, ins, outs, num_heads=N, **attrs)
    with pytest.raises(Exception, match=f"att.*Attention.*{match}"):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


# -- GroupQueryAttention -------------------------------------------------------------

GN, GKV, GH = 4, 2, 16          # 4 query heads on 2 kv heads


def _gqa_model(extra_in=(), extra_names=(), outs=("y", "pk_out", "pv_out"), h_=GH, **attrs):
    ins = [("q", F, ["b", "s", GN * h_]), ("k", F, ["b", "s", GKV * h_]),
           ("v", F, ["b", "s", GKV * h_]), ("pk", F, ["b", GKV, "p", h_]),
           ("pv", F, ["b", GKV, "p", h_]), ("sl", T.INT32, ["b"]), ("ts", T.INT32, [])]
    names = ["q", "k", "v", "pk", "pv", "sl", "ts"] + list(extra_names)
    return _model("GroupQueryAttention", names, ins + list(extra_in), list(outs),
                  num_heads=GN, kv_num_heads=GKV, **attrs)


def _gqa_feeds(s, p, seqlens, total, h_=GH, **extra):
    b = len(seqlens)
    return dict(q=_f(b, s, GN * h_), k=_f(b, s, GKV * h_), v=_f(b, s, GKV * h_),
                pk=_f(b, GKV, p, h_), pv=_f(b, GKV, p, h_),
                sl=np.array(seqlens, np.int32), ts=np.array(total, np.int32), **extra)


# (S, past buffer P, seqlens_k, total_sequence_length): a prompt (S == total:
# the past is not read) into a static cache (total <= P), decode steps with
# ragged lengths (total = P + S, or a static cache longer than used), a prompt
# padded on the right (seqlens_k < S - 1) and a later prompt chunk (S > 1
# after a past, batch 1)
GQA_STEPS = [(3, 4, [2, 2], 3), (1, 4, [4, 2, 3], 5), (3, 5, [2, 0], 3), (1, 6, [3, 5], 6),
             (3, 2, [4], 5)]


@pytest.mark.parametrize("opt", OPT)
def test_gqa_kv_cache(tmp_path, opt):
    m = _gqa_model(scale=0.2)
    _check(tmp_path, m, [_gqa_feeds(*st) for st in GQA_STEPS], opt)


@pytest.mark.parametrize("opt", OPT)
def test_gqa_local_window_rotary(tmp_path, opt):
    """local_window_size 2 with rotary (cos / sin caches of 16 positions, the
    full head rotated), not interleaved and interleaved (two nodes)."""
    cs = [("cos", F, [16, GH // 2]), ("sin", F, [16, GH // 2])]
    ins = [("q", F, ["b", "s", GN * GH]), ("k", F, ["b", "s", GKV * GH]),
           ("v", F, ["b", "s", GKV * GH]), ("pk", F, ["b", GKV, "p", GH]),
           ("pv", F, ["b", GKV, "p", GH]), ("sl", T.INT32, ["b"]), ("ts", T.INT32, [])] + cs
    names = ["q", "k", "v", "pk", "pv", "sl", "ts", "cos", "sin"]
    nodes = [h.make_node("GroupQueryAttention", names, [f"y{i}", f"k{i}", f"v{i}"],
                         domain="com.microsoft", name=f"g{i}", num_heads=GN, kv_num_heads=GKV,
                         local_window_size=2, do_rotary=1, rotary_interleaved=i)
             for i in (0, 1)]
    m = model(nodes, ins, [(f"{x}{i}", F, None) for i in (0, 1) for x in "ykv"], ms_opset=1)
    feeds = [_gqa_feeds(*st, cos=_f(16, GH // 2), sin=_f(16, GH // 2)) for st in GQA_STEPS[:3]]
    _check(tmp_path, m, feeds, opt, tol=5e-5)


def test_gqa_no_past(tmp_path):
    """Prompts without a past: the presents hold the new keys only."""
    ins = [("q", F, ["b", "s", GN * GH]), ("k", F, ["b", "s", GKV * GH]),
           ("v", F, ["b", "s", GKV * GH]), ("sl", T.INT32, ["b"]), ("ts", T.INT32, [])]
    m = _model("GroupQueryAttention", ["q", "k", "v", "", "", "sl", "ts"], ins,
               ["y", "pk_out", "pv_out"], num_heads=GN, kv_num_heads=GKV)
    feeds = []
    for s, seqlens in ((3, [2, 1]), (2, [1])):
        f = _gqa_feeds(s, 0, seqlens, s)
        feeds.append({k: f[k] for k in ("q", "k", "v", "sl", "ts")})
    _check(tmp_path, m, feeds, 0)


def test_gqa_partial_rotary(tmp_path):
    """A rotary dim (16) below the head size (32)."""
    cs = [("cos", F, [8, 8]), ("sin", F, [8, 8])]
    m = _gqa_model(cs, ["cos", "sin"], h_=32, do_rotary=1)
    feeds = [_gqa_feeds(*st, h_=32, cos=_f(8, 8), sin=_f(8, 8)) for st in GQA_STEPS[:2]]
    _check(tmp_path, m, feeds, 0, tol=5e-5)


@pytest.mark.parametrize("attrs,extra,outs,match", [
    (dict(softcap=30.0), (), None, "softcap is not supported"),
    (dict(smooth_softmax=1), (), None, "smooth_softmax is not supported"),
    (dict(causal=0, local_window_size=-1), (), None, "causal = 0 is not supported"),
    ({}, (("ab", F, [1, GN, 1, 5]),), None, "'attention_bias' is not supported"),
    (dict(qk_output=1), (), ("y", "pk_out", "pv_out", "qk"), "qk_output"),
    (dict(k_quant_type="PER_TENSOR"), (), None, "quantized KV cache"),
])
def test_gqa_refusals(tmp_path, attrs, extra, outs, match):
    extra_names = ["", "", "", "ab"] if extra else []   # cos, sin, position_ids, attention_bias
    m = _gqa_model(extra, extra_names, outs or ("y", "pk_out", "pv_out"), **attrs)
    with pytest.raises(Exception, match=f"att.*GroupQueryAttention.*{match}"):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


def test_gqa_packed_qkv_refused(tmp_path):
    ins = [("q", F, [1, 2, (GN + 2 * GKV) * GH]), ("sl", T.INT32, [1]), ("ts", T.INT32, [])]
    m = _model("GroupQueryAttention", ["q", "", "", "", "", "sl", "ts"], ins, ["y"],
               num_heads=GN, kv_num_heads=GKV)
    with pytest.raises(Exception, match="att.*GroupQueryAttention.*packed QKV"):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


def test_gqa_bad_seqlens_at_run_time(tmp_path):
    """A decode step whose seqlens_k needs more past keys than the buffer holds."""
    m = _gqa_model()
    check_rejects(tmp_path, m, [_gqa_feeds(1, 2, [5, 1], 3)],
                  "att.*GroupQueryAttention.*seqlens_k .*does not fit")
