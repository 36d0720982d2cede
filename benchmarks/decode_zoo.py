"""LLM decode-step models for the benchmark, built with ``onnx.helper`` and
seeded random weights (no transformers, no downloads).

    gpt2_decode   GPT-2-small-sized KV-cache decode step: 12 layers, d_model 768,
                  12 heads of 64, FFN 3072, vocab 50257 (tied embedding / LM head),
                  1024 positions; batch 1, one new token, past length 127
    gpt2_decode_dyn
                  the same step with batch, sequence (new tokens) and past length all
                  dim_params (``batch``, ``seq``, ``past``), as a decode export with
                  ``dynamic_axes`` writes it: position ids from a Range, a causal
                  mask over the past and new tokens; fed at batch 1, one token,
                  past 127
    llama_int4_decode
                  a LLaMA-style decode step (RMSNorm, rotary embedding, grouped-query
                  attention, SiLU-gated FFN): 4 layers, d_model 2048, 32 heads of 64
                  sharing 4 KV heads, FFN 5632, vocab 32000 (untied LM head);
                  batch 1, one new token, past length 511 (context 512); every
                  MatMul quantized by onnxruntime's MatMulNBitsQuantizer (4 bits,
                  block 32, its default format: MatMulNBits with zero points)

The graph is what an exporter writes for one decode step of GPT-2
(``use_cache=True``), without the attention mask (one new token attends to
every past position and itself, so the causal mask is all ones):

    inputs   input_ids [1, 1] int64;
             past_key.L, past_value.L [1, 12, past, 64] for L in 0..11
             (``past`` a dim_param: the dynamic past length of a decode export)
    outputs  logits [1, 1, 50257];
             present_key.L, present_value.L [1, 12, past + 1, 64]

    x = wte[input_ids] + wpe[past]                    (position = past length, from Shape)
    per layer:  h = LayerNorm(x);  q, k, v = Split(h @ W_qkv + b_qkv)   (fused QKV MatMul)
                K = Concat(past_key, k), V = Concat(past_value, v)      (axis 2: present)
                a = Softmax(q K^T / 8) V;  x = x + a @ W_o + b_o
                h = LayerNorm(x);  x = x + gelu_tanh(h @ W_1 + b_1) @ W_2 + b_2
    logits = LayerNorm(x) @ wte^T                      (the tied LM head: a Transpose of wte)

The dynamic variant (``gpt2_decode(..., batch="batch", seq="seq")``) reshapes
with 0s (copy the batch / sequence dims), takes the positions
Range(past, past + seq) and adds, before each Softmax, the causal bias
Where(key position <= query position, 0, -1e9) [seq, past + seq].

At batch 1 every MatMul has M = 1: the step streams the 124 M weights
(~500 MB) once, so it is bound by memory bandwidth. ``weight_bytes`` gives
the bytes streamed per step (a table only gathered from counts one row).

The LLaMA step (``llama_decode``; inputs past_key.L / past_value.L
[1, 4, past, 64], the same outputs as above)::

    x = embed[input_ids]                               (position = past length)
    per layer:  h = rms(x) * g;  q = h @ Wq, k = h @ Wk, v = h @ Wv     ([d, 256] for k, v)
                q, k = rotate_half rotary embedding at the position (cos / sin tables)
                K = Concat(past_key, k), V = Concat(past_value, v)
                the 32 query heads as [1, 4, 8, 64] (8 per KV head: no repeat of K / V)
                a = Softmax(q K^T / 8) V;  x = x + a @ Wo
                h = rms(x) * g;  x = x + (silu(h @ Wgate) * (h @ Wup)) @ Wdown
    logits = rms(x) * g @ W_lm
    rms(x) = x / sqrt(mean(x^2) + 1e-5)                 (plain ops)

Its 4-bit weights are ~120 MB (the LM head ~33 MB of them).
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnx_mlir_py.testing.models import IR_VERSION, OPSET, _Graph

# name -> (layers, d_model, heads, ffn, vocab, positions, past length)
CONFIGS = {"gpt2_decode": (12, 768, 12, 3072, 50257, 1024, 127),
           "gpt2_decode_dyn": (12, 768, 12, 3072, 50257, 1024, 127)}
# models whose batch and sequence are dim_params too (past always is)
DYNAMIC_BATCH_SEQ = {"gpt2_decode_dyn"}
# name -> (layers, d_model, heads, kv heads, ffn, vocab, positions, past length, bits, block)
LLAMA_CONFIGS = {"llama_int4_decode": (4, 2048, 32, 4, 5632, 32000, 512, 511, 4, 32)}
MODELS = list(CONFIGS) + list(LLAMA_CONFIGS)


def _layer_norm(g: _Graph, x: str, d: int) -> str:
    scale = g.init("ln_g", (1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32))
    return g.node("LayerNormalization", [x, scale, g.small("ln_b", (d,), 0.05)], axis=-1,
                  epsilon=1e-5)


def _linear(g: _Graph, x: str, din: int, dout: int) -> str:
    """GPT-2's Conv1D as exported: MatMul by a [din, dout] weight, then Add."""
    w = g.weight("W", (din, dout), din, gain=1.0)
    return g.node("Add", [g.node("MatMul", [x, w]), g.small("b", (dout,), 0.02)])


def _gelu_tanh(g: _Graph, x: str) -> str:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's "gelu_new"."""
    x3 = g.node("Pow", [x, g.f32("three", 3.0)])
    inner = g.node("Add", [x, g.node("Mul", [x3, g.f32("c", 0.044715)])])
    t = g.node("Tanh", [g.node("Mul", [inner, g.f32("k", math.sqrt(2.0 / math.pi))])])
    half_x = g.node("Mul", [x, g.f32("half", 0.5)])
    return g.node("Mul", [half_x, g.node("Add", [t, g.f32("one", 1.0)])])


def _attention(g: _Graph, h: str, past_k: str, past_v: str, d: int, heads: int,
               mask: str | None = None) -> tuple[str, str, str]:
    """(attention output [1, 1, d] before the residual, present key, present value);
    ``mask``: the causal bias added to the scores (the dynamic variant: then the
    reshapes keep the batch and sequence dims with 0s)."""
    dh = d // heads
    lead = 0 if mask is not None else 1
    qkv = _linear(g, h, d, 3 * d)
    q, k, v = g.node("Split", [qkv, g.i64("split", [d, d, d])], n_out=3, axis=-1)
    heads_shape = g.i64("heads_shape", [lead, lead, heads, dh])
    q, k, v = (g.node("Transpose", [g.node("Reshape", [t, heads_shape])], perm=[0, 2, 1, 3])
               for t in (q, k, v))                                  # [1, heads, 1, dh]
    present_k = g.node("Concat", [past_k, k], axis=2)               # [1, heads, past+1, dh]
    present_v = g.node("Concat", [past_v, v], axis=2)
    kt = g.node("Transpose", [present_k], perm=[0, 1, 3, 2])
    s = g.node("Div", [g.node("MatMul", [q, kt]), g.f32("scale", math.sqrt(dh))])
    if mask is not None:
        s = g.node("Add", [s, mask])                                # [B, heads, S, T]
    c = g.node("MatMul", [g.node("Softmax", [s], axis=-1), present_v])   # [1, heads, 1, dh]
    c = g.node("Reshape", [g.node("Transpose", [c], perm=[0, 2, 1, 3]),
                           g.i64("merged", [lead, lead, d])])
    return _linear(g, c, d, d), present_k, present_v


def _causal_bias(g: _Graph, past: str, seq: str) -> tuple[str, str]:
    """(positions [S] = past .. past+S-1, bias [S, past+S]: 0 where the key's
    position <= the query's, else -1e9) from the [1] int64 ``past`` and ``seq``."""
    total = g.node("Add", [past, seq])
    one = g.i64("one", 1)
    zero = g.i64("zero", 0)
    squeeze = lambda t: g.node("Squeeze", [t, g.i64("axes0", [0])])   # noqa: E731
    pos = g.node("Range", [squeeze(past), squeeze(total), one])        # [S]
    keys = g.node("Range", [zero, squeeze(total), one])                # [T]
    allowed = g.node("LessOrEqual", [g.node("Unsqueeze", [keys, g.i64("axes0", [0])]),
                                     g.node("Unsqueeze", [pos, g.i64("axes1", [1])])])
    bias = g.node("Where", [allowed, g.f32("open", 0.0), g.f32("closed", -1e9)])
    return pos, bias


def gpt2_decode(layers: int = 12, d: int = 768, heads: int = 12, ffn: int = 3072,
                vocab: int = 50257, positions: int = 1024, seed: int = 0,
                past: str | int = "past", batch: str | int = 1,
                seq: str | int = 1) -> onnx.ModelProto:
    """One KV-cache decode step of a GPT-2-shaped decoder (see the module doc);
    ``past`` is the past length's dim_param (or an int for a static copy);
    ``batch`` / ``seq`` dim_params (strings) make the dynamic variant (with
    position Range and causal mask), ints other than 1 are not supported."""
    if d % heads:
        raise ValueError(f"d={d} is not a multiple of heads={heads}")
    dynamic = isinstance(batch, str) or isinstance(seq, str)
    if not dynamic and (batch, seq) != (1, 1):
        raise ValueError(f"batch={batch}, seq={seq}: expected 1 and 1, or dim_params")
    g = _Graph(seed)
    dh = d // heads
    wte = g.weight("wte", (vocab, d), d, gain=1.0)
    wpe = g.small("wpe", (positions, d), 0.02)
    kv_in = [(f"past_key.{i}", f"past_value.{i}") for i in range(layers)]
    # the new token's position is the past length: dim 2 of a past key
    pos = g.node("Shape", [kv_in[0][0]], start=2, end=3)             # [1] int64
    mask = None
    if dynamic:
        pos, mask = _causal_bias(g, pos, g.node("Shape", ["input_ids"], start=1, end=2))
    x = g.node("Add", [g.node("Gather", [wte, "input_ids"], axis=0),   # [1, 1, d]
                       g.node("Gather", [wpe, pos], axis=0)])          # [1, d]
    presents = []
    for pk, pv in kv_in:
        a, present_k, present_v = _attention(g, _layer_norm(g, x, d), pk, pv, d, heads, mask)
        x = g.node("Add", [x, a])
        f = _gelu_tanh(g, _linear(g, _layer_norm(g, x, d), d, ffn))
        x = g.node("Add", [x, _linear(g, f, ffn, d)])
        presents += [present_k, present_v]
    head = g.node("Transpose", [wte], perm=[1, 0])                      # tied LM head
    logits = g.node("MatMul", [_layer_norm(g, x, d), head])
    return _decode_model(g, "gpt2_decode", logits, presents, layers, heads, dh, vocab, past,
                         batch, seq)


def _decode_model(g: _Graph, name: str, logits: str, presents: list, layers: int,
                  kv_heads: int, dh: int, vocab: int, past: str | int,
                  batch: str | int = 1, seq: str | int = 1) -> onnx.ModelProto:
    """The decode step's model: inputs input_ids [batch, seq], past_key.L /
    past_value.L [batch, kv_heads, past, dh]; outputs logits [batch, seq, vocab],
    present_key.L / present_value.L (``presents``: the Concat results, key and
    value per layer)."""
    # name the graph outputs the way decode exports do
    out_names = {logits: "logits"}
    for i in range(layers):
        out_names[presents[2 * i]] = f"present_key.{i}"
        out_names[presents[2 * i + 1]] = f"present_value.{i}"
    for n in g.nodes:
        n.input[:] = [out_names.get(x, x) for x in n.input]
        n.output[:] = [out_names.get(x, x) for x in n.output]
    if isinstance(past, int) and isinstance(seq, int):
        total = past + seq
    else:
        total = f"{past} + {seq}"
    kv = lambda name, length: helper.make_tensor_value_info(  # noqa: E731
        name, TensorProto.FLOAT, [batch, kv_heads, length, dh])
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [batch, seq])]
    inputs += [kv(f"past_{kind}.{i}", past) for i in range(layers) for kind in ("key", "value")]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, seq, vocab])]
    outputs += [kv(f"present_{kind}.{i}", total) for i in range(layers)
                for kind in ("key", "value")]
    graph = helper.make_graph(g.nodes, name, inputs, outputs, initializer=g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="benchmarks.decode_zoo")
    m.ir_version = IR_VERSION
    return m


def _rms_norm(g: _Graph, x: str, d: int) -> str:
    """x / sqrt(mean(x^2) + eps) * g, in plain ops (as LLaMA exports write it)."""
    ms = g.node("ReduceMean", [g.node("Mul", [x, x])], axes=[-1], keepdims=1)
    r = g.node("Sqrt", [g.node("Add", [ms, g.f32("eps", 1e-5)])])
    scale = g.init("rms_g", (1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32))
    return g.node("Mul", [g.node("Div", [x, r]), scale])


def _project(g: _Graph, x: str, din: int, dout: int) -> str:
    """A bias-free projection: MatMul by a [din, dout] weight."""
    return g.node("MatMul", [x, g.weight("W", (din, dout), din, gain=1.0)])


def _rotary(g: _Graph, x: str, cos: str, sin: str, half: int) -> str:
    """rotate_half rotary embedding of x [1, heads, 1, 2 * half] at one position
    (cos, sin [1, half]): (x1 cos - x2 sin, x2 cos + x1 sin)."""
    x1, x2 = g.node("Split", [x, g.i64("halves", [half, half])], n_out=2, axis=-1)
    r1 = g.node("Sub", [g.node("Mul", [x1, cos]), g.node("Mul", [x2, sin])])
    r2 = g.node("Add", [g.node("Mul", [x2, cos]), g.node("Mul", [x1, sin])])
    return g.node("Concat", [r1, r2], axis=-1)


def llama_decode(layers: int = 4, d: int = 2048, heads: int = 32, kv_heads: int = 4,
                 ffn: int = 5632, vocab: int = 32000, positions: int = 512, seed: int = 0,
                 past: str | int = "past") -> onnx.ModelProto:
    """One KV-cache decode step of a LLaMA-shaped decoder in f32 (see the module
    doc; :func:`quantize_nbits` makes the int4 model)."""
    if d % heads or heads % kv_heads:
        raise ValueError(f"d={d}, heads={heads}, kv_heads={kv_heads}: expected d a multiple "
                         f"of heads and heads of kv_heads")
    g = _Graph(seed)
    dh, group = d // heads, heads // kv_heads
    half = dh // 2
    embed = g.small("embed", (vocab, d), 0.02)
    inv = 1.0 / 10000.0 ** (np.arange(half) / half)
    ang = np.arange(positions)[:, None] * inv[None, :]
    cos_t, sin_t = g.f32("cos", np.cos(ang)), g.f32("sin", np.sin(ang))
    kv_in = [(f"past_key.{i}", f"past_value.{i}") for i in range(layers)]
    pos = g.node("Shape", [kv_in[0][0]], start=2, end=3)             # [1] int64
    cos, sin = g.node("Gather", [cos_t, pos], axis=0), g.node("Gather", [sin_t, pos], axis=0)
    x = g.node("Gather", [embed, "input_ids"], axis=0)                 # [1, 1, d]
    presents = []
    for pk, pv in kv_in:
        h = _rms_norm(g, x, d)
        q, k, v = (_project(g, h, d, n) for n in (d, kv_heads * dh, kv_heads * dh))
        q = g.node("Transpose", [g.node("Reshape", [q, g.i64("q_shape", [1, 1, heads, dh])])],
                   perm=[0, 2, 1, 3])                                   # [1, heads, 1, dh]
        kv_shape = g.i64("kv_shape", [1, 1, kv_heads, dh])
        k, v = (g.node("Transpose", [g.node("Reshape", [t, kv_shape])], perm=[0, 2, 1, 3])
                for t in (k, v))                                        # [1, kv_heads, 1, dh]
        q, k = _rotary(g, q, cos, sin, half), _rotary(g, k, cos, sin, half)
        present_k = g.node("Concat", [pk, k], axis=2)                 # [1, kv, past+1, dh]
        present_v = g.node("Concat", [pv, v], axis=2)
        qg = g.node("Reshape", [q, g.i64("q_groups", [1, kv_heads, group, dh])])
        s = g.node("Div", [g.node("MatMul", [qg, g.node("Transpose", [present_k],
                                                        perm=[0, 1, 3, 2])]),
                           g.f32("scale", math.sqrt(dh))])             # [1, kv, group, T]
        a = g.node("MatMul", [g.node("Softmax", [s], axis=-1), present_v])
        a = g.node("Reshape", [a, g.i64("merged", [1, 1, d])])
        x = g.node("Add", [x, _project(g, a, d, d)])
        h = _rms_norm(g, x, d)
        gate = _project(g, h, d, ffn)
        silu = g.node("Mul", [gate, g.node("Sigmoid", [gate])])
        x = g.node("Add", [x, _project(g, g.node("Mul", [silu, _project(g, h, d, ffn)]), ffn, d)])
        presents += [present_k, present_v]
    logits = _project(g, _rms_norm(g, x, d), d, vocab)
    return _decode_model(g, "llama_decode", logits, presents, layers, kv_heads, dh, vocab, past)


def quantize_nbits(model: onnx.ModelProto, bits: int, block: int) -> onnx.ModelProto:
    """Every MatMul with a constant B as MatMulNBits, by onnxruntime's
    MatMulNBitsQuantizer (its default format, asymmetric: with zero points);
    ``model`` is changed in place."""
    import logging

    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    log = logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer")
    level = log.level
    log.setLevel(logging.WARNING)            # not a line per node
    try:
        quant = MatMulNBitsQuantizer(model, bits=bits, block_size=block)
        quant.process()
    finally:
        log.setLevel(level)
    return quant.model.model


def build(name: str, **kw) -> onnx.ModelProto:
    if name in LLAMA_CONFIGS:
        layers, d, heads, kv, ffn, vocab, positions, _, bits, block = LLAMA_CONFIGS[name]
        return quantize_nbits(llama_decode(layers, d, heads, kv, ffn, vocab, positions, **kw),
                              bits, block)
    layers, d, heads, ffn, vocab, positions, _ = CONFIGS[name]
    if name in DYNAMIC_BATCH_SEQ:
        kw = {"batch": "batch", "seq": "seq", **kw}
    return gpt2_decode(layers, d, heads, ffn, vocab, positions, **kw)


def feeds(name: str, model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs of ``model`` at the past length configured for ``name``."""
    past = LLAMA_CONFIGS[name][7] if name in LLAMA_CONFIGS else CONFIGS[name][-1]
    return step_feeds(model, past, seed)


def step_feeds(model: onnx.ModelProto, past: int, seed: int = 0, batch: int = 1,
               seq: int = 1) -> dict[str, np.ndarray]:
    """Token ids in range (the vocab is the logits' last dim), ``batch`` x ``seq``
    of them, and random past keys / values of length ``past`` (a static batch
    or sequence dim of the model wins over the arguments)."""
    vocab = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
    rng = np.random.default_rng(seed)
    out = {}
    for vi in model.graph.input:
        dims = [d.dim_value or None for d in vi.type.tensor_type.shape.dim]
        b = dims[0] or batch
        if vi.name == "input_ids":
            out[vi.name] = rng.integers(0, vocab, (b, dims[1] or seq)).astype(np.int64)
        else:
            out[vi.name] = rng.standard_normal((b, dims[1], past, dims[3])).astype(np.float32)
    return out


def weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the initializers: what one decode step streams from memory
    (a table only Gathers read counts one row per Gather)."""
    users: dict[str, list] = {}
    for n in model.graph.node:
        for i, x in enumerate(n.input):
            users.setdefault(x, []).append((n.op_type, i))
    total = 0
    for t in model.graph.initializer:
        size = int(np.prod(t.dims)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
        use = users.get(t.name, [])
        if use and t.dims and all(u == ("Gather", 0) for u in use):
            size = size // t.dims[0] * len(use)
        total += size
    return total
