"""LLM decode-step models for the benchmark, built with ``onnx.helper`` and
seeded random weights (no transformers, no downloads).

    gpt2_decode   GPT-2-small-sized KV-cache decode step: 12 layers, d_model 768,
                  12 heads of 64, FFN 3072, vocab 50257 (tied embedding / LM head),
                  1024 positions; batch 1, one new token, past length 127

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

At batch 1 every MatMul has M = 1: the step streams the 124 M weights
(~500 MB) once, so it is bound by memory bandwidth. ``weight_bytes`` gives
the bytes streamed per step (the embedding rows read by the Gathers are a
rounding error beside the LM head's full read of wte).
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper

from onnx_mlir_py.testing.models import IR_VERSION, OPSET, _Graph

# name -> (layers, d_model, heads, ffn, vocab, positions, past length)
CONFIGS = {"gpt2_decode": (12, 768, 12, 3072, 50257, 1024, 127)}
MODELS = list(CONFIGS)


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


def _attention(g: _Graph, h: str, past_k: str, past_v: str, d: int, heads: int
               ) -> tuple[str, str, str]:
    """(attention output [1, 1, d] before the residual, present key, present value)."""
    dh = d // heads
    qkv = _linear(g, h, d, 3 * d)
    q, k, v = g.node("Split", [qkv, g.i64("split", [d, d, d])], n_out=3, axis=-1)
    heads_shape = g.i64("heads_shape", [1, 1, heads, dh])
    q, k, v = (g.node("Transpose", [g.node("Reshape", [t, heads_shape])], perm=[0, 2, 1, 3])
               for t in (q, k, v))                                  # [1, heads, 1, dh]
    present_k = g.node("Concat", [past_k, k], axis=2)               # [1, heads, past+1, dh]
    present_v = g.node("Concat", [past_v, v], axis=2)
    kt = g.node("Transpose", [present_k], perm=[0, 1, 3, 2])
    s = g.node("Div", [g.node("MatMul", [q, kt]), g.f32("scale", math.sqrt(dh))])
    c = g.node("MatMul", [g.node("Softmax", [s], axis=-1), present_v])   # [1, heads, 1, dh]
    c = g.node("Reshape", [g.node("Transpose", [c], perm=[0, 2, 1, 3]),
                           g.i64("merged", [1, 1, d])])
    return _linear(g, c, d, d), present_k, present_v


def gpt2_decode(layers: int = 12, d: int = 768, heads: int = 12, ffn: int = 3072,
                vocab: int = 50257, positions: int = 1024, seed: int = 0,
                past: str | int = "past") -> onnx.ModelProto:
    """One KV-cache decode step of a GPT-2-shaped decoder (see the module doc);
    ``past`` is the past length's dim_param (or an int for a static copy)."""
    if d % heads:
        raise ValueError(f"d={d} is not a multiple of heads={heads}")
    g = _Graph(seed)
    dh = d // heads
    wte = g.weight("wte", (vocab, d), d, gain=1.0)
    wpe = g.small("wpe", (positions, d), 0.02)
    kv_in = [(f"past_key.{i}", f"past_value.{i}") for i in range(layers)]
    # the new token's position is the past length: dim 2 of a past key
    pos = g.node("Shape", [kv_in[0][0]], start=2, end=3)             # [1] int64
    x = g.node("Add", [g.node("Gather", [wte, "input_ids"], axis=0),   # [1, 1, d]
                       g.node("Gather", [wpe, pos], axis=0)])          # [1, d]
    presents = []
    for pk, pv in kv_in:
        a, present_k, present_v = _attention(g, _layer_norm(g, x, d), pk, pv, d, heads)
        x = g.node("Add", [x, a])
        f = _gelu_tanh(g, _linear(g, _layer_norm(g, x, d), d, ffn))
        x = g.node("Add", [x, _linear(g, f, ffn, d)])
        presents += [present_k, present_v]
    head = g.node("Transpose", [wte], perm=[1, 0])                      # tied LM head
    logits = g.node("MatMul", [_layer_norm(g, x, d), head])
    # name the graph outputs the way decode exports do
    out_names = {logits: "logits"}
    for i in range(layers):
        out_names[presents[2 * i]] = f"present_key.{i}"
        out_names[presents[2 * i + 1]] = f"present_value.{i}"
    for n in g.nodes:
        n.input[:] = [out_names.get(x, x) for x in n.input]
        n.output[:] = [out_names.get(x, x) for x in n.output]
    total = past + 1 if isinstance(past, int) else f"{past} + 1"
    kv = lambda name, length: helper.make_tensor_value_info(  # noqa: E731
        name, TensorProto.FLOAT, [1, heads, length, dh])
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 1])]
    inputs += [kv(n, past) for pair in kv_in for n in pair]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, vocab])]
    outputs += [kv(f"present_{kind}.{i}", total) for i in range(layers)
                for kind in ("key", "value")]
    graph = helper.make_graph(g.nodes, "gpt2_decode", inputs, outputs, initializer=g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="benchmarks.decode_zoo")
    m.ir_version = IR_VERSION
    return m


def build(name: str, **kw) -> onnx.ModelProto:
    layers, d, heads, ffn, vocab, positions, _ = CONFIGS[name]
    return gpt2_decode(layers, d, heads, ffn, vocab, positions, **kw)


def feeds(name: str, model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs of ``model`` at the past length configured for ``name``."""
    return step_feeds(model, CONFIGS[name][-1], seed)


def step_feeds(model: onnx.ModelProto, past: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A token id in range (the vocab is the logits' last dim) and random past
    keys / values of length ``past``."""
    vocab = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
    rng = np.random.default_rng(seed)
    out = {}
    for vi in model.graph.input:
        if vi.name == "input_ids":
            out[vi.name] = rng.integers(0, vocab, (1, 1)).astype(np.int64)
        else:
            b, h, _, dh = (d.dim_value for d in vi.type.tensor_type.shape.dim)
            out[vi.name] = rng.standard_normal((b, h, past, dh)).astype(np.float32)
    return out


def weight_bytes(model: onnx.ModelProto) -> int:
    """Bytes of the initializers: what one decode step streams from memory."""
    return sum(int(np.prod(t.dims)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
               for t in model.graph.initializer)
