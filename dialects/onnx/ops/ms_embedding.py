"""com.microsoft EmbedLayerNormalization, as onnxruntime's CPU kernel
defines it (contrib_ops/cpu/bert/embed_layer_norm.cc and its helper).

Inputs: input_ids [B, S] (i32), segment_ids? [B, S] (i32), word_embedding
[V, H], position_embedding [P, H], segment_embedding? [G, H], gamma [H],
beta [H], mask? [B, S] (i32), position_ids? [B, S] or [1, S] (i32).
Results: output [B, S, H] = LayerNorm over H of word[ids] + position[p] (+
segment[segment_ids]) with p = position_ids (broadcast over the batch when
[1, S]) or the sequence index; mask_index? [B] (i32) = number of mask
elements equal to 1 per row (zeros without a mask); embedding_sum? [B, S, H]
(the sum before the normalization).

Supported: f32 embeddings (onnxruntime's CPU kernel is f32 only). Refused:
f16; segment_ids without segment_embedding (onnxruntime fails every run) and
segment_embedding without segment_ids (onnxruntime then adds row 0);
epsilon < 0. :func:`embed_checks` runs at verification (static dims) and
again in the lowering (run-time dims).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

import mlir.ir as ir

MS = "com.microsoft"
OP = "EmbedLayerNormalization"
# ONNX input index -> (name, rank)
INPUTS = {0: ("input_ids", 2), 1: ("segment_ids", 2), 2: ("word_embedding", 2),
          3: ("position_embedding", 2), 4: ("segment_embedding", 2), 5: ("gamma", 1),
          6: ("beta", 1), 7: ("mask", 2), 8: ("position_ids", 2)}
_IDS = (0, 1, 7, 8)


def embed_checks(ctx: D.ShapeChecks, d: dict) -> None:
    """onnxruntime's shape rules on dims (ints, UNKNOWN or run-time values):
    ``d`` maps the PRESENT inputs' ONNX index to their dims."""
    ids, h = d[0], d[2][1]
    for i in (1, 7):        # segment_ids, mask: input_ids' shape
        if i in d:
            for k in range(2):
                ctx.require(D.eq(d[i][k], ids[k]), f"input '{INPUTS[i][0]}' dim {k} is {{0}}: "
                            f"expected input_ids' dim {k} ({{1}})", d[i][k], ids[k])
    if 8 in d:
        p = d[8]
        ctx.require(D.either(D.eq(p[0], 1), D.eq(p[0], ids[0])),
                    "input 'position_ids' dim 0 is {0}: expected 1 or input_ids' batch size "
                    "{1}", p[0], ids[0])
        ctx.require(D.eq(p[1], ids[1]), "input 'position_ids' dim 1 is {0}: expected "
                    "input_ids' sequence length {1}", p[1], ids[1])
    for i in (3, 4):
        if i in d:
            ctx.require(D.eq(d[i][1], h), f"input '{INPUTS[i][0]}' dim 1 is {{0}}: expected "
                        f"hidden size {{1}} (word_embedding's dim 1)", d[i][1], h)
    for i in (5, 6):
        ctx.require(D.eq(d[i][0], h), f"input '{INPUTS[i][0]}' has {{0}} elements: expected "
                    f"hidden size {{1}} (word_embedding's dim 1)", d[i][0], h)


def present(op: OnnxOp) -> dict:
    """ONNX input index -> Value of the present inputs."""
    return {i: op.input(i) for i in INPUTS if op.input(i) is not None}


def _verify(op: OnnxOp) -> None:
    ins = present(op)
    if op.attrs.epsilon < 0:
        op.fail(f"attribute 'epsilon' = {op.attrs.epsilon}: expected >= 0")
    if (1 in ins) != (4 in ins):
        have, miss = ("segment_ids", "segment_embedding") if 1 in ins else \
            ("segment_embedding", "segment_ids")
        op.fail(f"input '{have}' without '{miss}' is not supported: give both or neither")
    for i, v in ins.items():
        name, rank = INPUTS[i]
        et = op.elem(v)
        if et is not None:
            want = "i32" if i in _IDS else "f32"
            if str(et) != want:
                op.fail(f"input '{name}' has element type {et}: expected {want}"
                        + ("" if i in _IDS else " (onnxruntime's CPU kernel is f32 only)"))
        s = op.shape(v)
        if s is not None and len(s) != rank:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank {rank}")
    shapes = {i: op.shape(v) for i, v in ins.items()}
    if all(s is not None for s in shapes.values()):
        embed_checks(D.inference_checks(op), {i: D.from_static(s) for i, s in shapes.items()})


@verifier(OP, 1, domain=MS)
def _embed_verify(op: OnnxOp):
    _verify(op)


@shape_rule(OP, 1, domain=MS)
def _embed_shape(op: OnnxOp):
    from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
    _verify(op)
    ids, word = op.shape(op.input(0)), op.shape(op.input(2))
    et = op.elem(op.input(2))
    b = s = h = None
    if ids is not None:
        b, s = ids
    if word is not None:
        h = word[1]
    if h is None:   # gamma / beta / position_embedding also give H
        for i, k in ((5, 0), (6, 0), (3, 1)):
            sh = op.shape(op.input(i))
            if sh is not None and sh[k] is not None:
                h = sh[k]
                break
    i32 = ir.IntegerType.get_signless(32)
    out = []
    for slot in result_slots(op):
        if slot == 1:
            out.append(tensor((b,), i32))
        else:
            out.append(None if et is None else tensor((b, s, h), et))
    return out
