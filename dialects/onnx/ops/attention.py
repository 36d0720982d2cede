"""Attention family: Attention, FlexAttention, LinearAttention,
RotaryEmbedding, CausalConvWithState, SwiGLU (RMSNormalization: normalization.py).

* Attention (v23-25): Q/K/V are 4-D [B, heads, seq, head_size] or 3-D
  [B, seq, heads * head_size] (then q_num_heads / kv_num_heads give the
  heads). Y is [B, q_heads, q_seq, v_head] (4-D Q) or [B, q_seq, q_heads *
  v_head] (3-D Q); present_key/value are [B, kv_heads, past_seq + kv_seq,
  head]; qk_matmul_output is [B, q_heads, q_seq, past_seq + kv_seq].
* FlexAttention: Y is [B, q_heads, q_seq, v_head] (rank-4 inputs only).
* LinearAttention: output [B, T, q_heads * d_v]; present_state
  [B, kv_heads, d_k, d_v] with d_k, d_v the K/V hidden sizes per kv head.
* RotaryEmbedding, SwiGLU: the input's shape.
* CausalConvWithState: output is the input [B, C, L]; present_state is
  [B, C, k - 1] for a weight [C, 1, k].
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, same_as_input
from onnx_mlir_py.dialects.onnx.ops.conv import opt_attr
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots

ATTENTION = (23, 24, 25)


def _div(a, b):
    return None if a is None or not b else a // b


def _add(a, b):
    return None if a is None or b is None else a + b


def _mul(a, b):
    return None if a is None or b is None else a * b


def _heads_view(op: OnnxOp, i: int, heads_attr: str):
    """(batch, heads, seq, head_size) of input i, 3-D or 4-D; None if unranked."""
    s = op.shape(op.input(i))
    if s is None:
        return None
    if len(s) == 4:
        return s
    if len(s) == 3:
        h = opt_attr(op, heads_attr)
        if h is None:
            op.fail(f"input {i} has shape {fmt(s)} (3-D): attribute '{heads_attr}' is required")
        if h < 1 or (s[2] is not None and s[2] % h):
            op.fail(f"input {i} hidden size {s[2]} is not divisible by {heads_attr} = {h}")
        return (s[0], h, s[1], _div(s[2], h))
    op.fail(f"input {i} has shape {fmt(s)}: expected rank 3 or 4")


def _attention(op: OnnxOp):
    q = _heads_view(op, 0, "q_num_heads")
    k = _heads_view(op, 1, "kv_num_heads")
    v = _heads_view(op, 2, "kv_num_heads")
    if q is not None and k is not None and None not in (q[3], k[3]) and q[3] != k[3]:
        op.fail(f"Q head size {q[3]} differs from K head size {k[3]}")
    if q is not None and k is not None and None not in (q[1], k[1]) and q[1] % k[1]:
        op.fail(f"q heads {q[1]} is not a multiple of kv heads {k[1]}")
    past_seq = 0
    pk = op.shape(op.input(4)) if len(op.spec.inputs) > 4 else None
    if op.input(4) is not None:
        past_seq = pk[2] if pk is not None and len(pk) == 4 else None
    batch = next((t[0] for t in (q, k, v) if t is not None and t[0] is not None), None)
    kv_seq = k[2] if k is not None else None
    total = _add(past_seq, kv_seq)
    qh = q[1] if q is not None else None
    qs = q[2] if q is not None else None
    kvh = k[1] if k is not None else (v[1] if v is not None else None)
    vh = v[3] if v is not None else None
    q_rank = op.rank(op.input(0))
    if q_rank == 3:
        y = (batch, qs, _mul(qh, vh))
    elif q_rank == 4:
        y = (batch, qh, qs, vh)
    else:
        y = None
    present_k = (batch, kvh, total, k[3] if k is not None else None)
    present_v = (batch, kvh, total, vh)
    qk = (batch, qh, qs, total)
    return [y, present_k, present_v, qk]


@verifier("Attention", *ATTENTION)
def _attention_verify(op: OnnxOp):
    _attention(op)


@shape_rule("Attention", *ATTENTION)
def _attention_shape(op: OnnxOp):
    shapes = _attention(op)
    ets = [op.elem(op.input(0)), op.elem(op.input(1)), op.elem(op.input(2)),
           op.elem(op.input(0))]
    return [tensor(shapes[k], ets[k]) if ets[k] is not None else None
            for k in result_slots(op)]


@shape_rule("FlexAttention", 1, domain="ai.onnx.preview")
def _flex_shape(op: OnnxOp):
    q, v = op.shape(op.input(0)), op.shape(op.input(2))
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    if q is None or v is None:
        return [tensor((q[0], q[1], q[2], None) if q is not None and len(q) == 4 else None,
                       et)]
    return [tensor((q[0], q[1], q[2], v[3]), et)]


@verifier("FlexAttention", 1, domain="ai.onnx.preview")
def _flex_verify(op: OnnxOp):
    for i, name in enumerate("QKV"):
        s = op.shape(op.input(i))
        if s is not None and len(s) != 4:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 4")


@shape_rule("LinearAttention", 27)
def _linear_attention_shape(op: OnnxOp):
    q, k, v = (op.shape(op.input(i)) for i in range(3))
    et = op.elem(op.input(0))
    qh, kvh = op.attrs.q_num_heads, op.attrs.kv_num_heads
    if et is None:
        return [None] * len(op.results)
    if q is None or k is None or v is None or not qh or not kvh:
        return [tensor(None, et)] * len(op.results)
    dk, dv = _div(k[2], kvh), _div(v[2], kvh)
    out = [tensor((q[0], q[1], _mul(qh, dv)), et)]
    if len(op.results) > 1:
        st = op.elem(op.input(3)) if op.input(3) is not None else et
        out.append(tensor((q[0], kvh, dk, dv), st))
    return out


@verifier("LinearAttention", 27)
def _linear_attention_verify(op: OnnxOp):
    qh, kvh = op.attrs.q_num_heads, op.attrs.kv_num_heads
    if qh is None or kvh is None:
        op.fail("attributes 'q_num_heads' and 'kv_num_heads' are required")
    if kvh < 1 or qh < 1 or qh % kvh:
        op.fail(f"q_num_heads = {qh} must be a positive multiple of kv_num_heads = {kvh}")
    for i, name in enumerate(("query", "key", "value")):
        s = op.shape(op.input(i))
        if s is not None and len(s) != 3:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 3 [B, T, H*D]")


shape_rule("RotaryEmbedding", 23)(same_as_input)
shape_rule("SwiGLU", 28)(same_as_input)


@verifier("SwiGLU", 28)
def _swiglu_verify(op: OnnxOp):
    a, b = op.shape(op.input(0)), op.shape(op.input(1))
    if a is not None and b is not None and (len(a) != len(b) or any(
            x is not None and y is not None and x != y for x, y in zip(a, b))):
        op.fail(f"A {fmt(a)} and B {fmt(b)} must have the same shape (no broadcasting)")


@shape_rule("CausalConvWithState", 27)
def _causal_conv_shape(op: OnnxOp):
    x, w = op.shape(op.input(0)), op.shape(op.input(1))
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    out = [tensor(x, et)]
    if len(op.results) > 1:
        kk = w[2] if w is not None and len(w) == 3 else None
        state = (x[0], x[1], None if kk is None else kk - 1) if x is not None else None
        out.append(tensor(state, et))
    return out


@verifier("CausalConvWithState", 27)
def _causal_conv_verify(op: OnnxOp):
    for i, name in ((0, "input"), (1, "weight"), (3, "past_state")):
        s = op.shape(op.input(i))
        if s is not None and len(s) != 3:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 3")
