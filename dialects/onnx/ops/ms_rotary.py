"""com.microsoft RotaryEmbedding, as onnxruntime's CPU kernel defines it.

``input`` is [B, S, hidden] (heads of ``head_size`` side by side) or
[B, N, S, head_size]; ``position_ids`` is one element (a start offset: token
s is at position offset + s) or [B, S]; ``cos_cache`` / ``sin_cache`` are
[max_seq, rot / 2]. The output has input's shape and type.

onnxruntime derives the geometry from the attributes and shapes:
head_size = 2 * cos_cache dim 1 without ``rotary_embedding_dim`` (then all of
each head rotates), else hidden / num_heads (then only the first
``rotary_embedding_dim`` elements of each head rotate, the rest are copied);
num_heads defaults to hidden / head_size. :func:`rotary_geometry` computes
it and refuses what that kernel would read inconsistently (heads that do not
tile the hidden size, a 4-D input whose head size is not its last dim, a
cache of neither width it reads); it needs the hidden size and the cache
width at compile time. ``is_packed_batching=1`` is not supported; ``scale``
is accepted and, as on onnxruntime's CPU, not used (it scales a cache update
the kernel does not do).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt, same_as_input

MS = "com.microsoft"


class Geometry:
    """``four``: input is [B, N, S, head_size]; ``heads``; ``head_size``;
    ``rot``: the rotated prefix of each head (even)."""

    def __init__(self, four: bool, heads: int, head_size: int, rot: int):
        self.four, self.heads, self.head_size, self.rot = four, heads, head_size, rot


def attrs(op: OnnxOp) -> tuple[int, int, bool]:
    """(num_heads, rotary_embedding_dim, interleaved) with onnxruntime's defaults."""
    nh = op.attrs.num_heads or 0
    rd = op.attrs.rotary_embedding_dim or 0
    return nh, rd, op.attrs.interleaved == 1


def rotary_geometry(op: OnnxOp, xs: tuple, cache_width: int | None) -> Geometry | None:
    """The geometry from input's shape ``xs`` and the caches' dim 1; None if
    the dims it needs (input's last dim, and dim 1 of a 4-D input, the cache
    width) are not static. Fails naming the node for what is refused."""
    nh, rd, _ = attrs(op)
    four = len(xs) == 4
    last = xs[-1]
    if last is None or cache_width is None:
        return None
    if cache_width < 1:
        op.fail(f"cos_cache dim 1 is {cache_width}: expected >= 1")
    if four:
        hs = last
        if rd == 0 and 2 * cache_width != hs:
            op.fail(f"cos_cache dim 1 is {cache_width}: expected head_size / 2 = {hs / 2:g} "
                    f"(input is [B, N, S, head_size = {hs}])")
        heads = xs[1]          # checked against num_heads by rotary_checks (maybe at run time)
    elif rd == 0:
        hs = 2 * cache_width
        heads = nh or last // hs
        if heads * hs != last:
            what = f"num_heads {nh} x" if nh else "a multiple of"
            op.fail(f"the hidden size {last} is not {what} head_size {hs} (2 x cos_cache dim 1)")
    else:
        if last % nh:
            op.fail(f"the hidden size {last} is not a multiple of num_heads = {nh}")
        hs, heads = last // nh, nh
    rot = rd or hs
    if rot > hs:
        op.fail(f"attribute 'rotary_embedding_dim' = {rd}: expected <= head_size {hs}")
    if rot % 2:
        op.fail(f"the rotated size {rot} is odd: expected an even rotary_embedding_dim / "
                f"head_size")
    if 2 * cache_width != rot:
        op.fail(f"cos_cache dim 1 is {cache_width}: expected rotary_embedding_dim / 2 = "
                f"{rot // 2}")
    return Geometry(four, heads, hs, rot)


def rotary_checks(ctx: D.ShapeChecks, op: OnnxOp, x: list, pos: list, cos: list,
                  sin: list) -> None:
    """The dims onnxruntime relates (ints, UNKNOWN or run-time values):
    caches of one shape, position_ids one element or [B, S], at most
    max_seq tokens, a 4-D input's heads = num_heads when given."""
    nh, _, _ = attrs(op)
    four = len(x) == 4
    bsz, seq = x[0], x[2] if four else x[1]
    for k in range(2):
        ctx.require(D.eq(sin[k], cos[k]), f"sin_cache dim {k} is {{0}}: expected cos_cache's "
                    f"({{1}})", sin[k], cos[k])
    if len(pos) == 1:
        ctx.require(D.eq(pos[0], 1), "position_ids has {0} elements: expected 1 (an offset) "
                    "or [batch, sequence]", pos[0])
    elif len(pos) == 2:
        ctx.require(D.eq(pos[0], bsz), "position_ids dim 0 is {0}: expected the batch size {1}",
                    pos[0], bsz)
        ctx.require(D.eq(pos[1], seq), "position_ids dim 1 is {0}: expected the sequence "
                    "length {1}", pos[1], seq)
    ctx.require(D.le(seq, cos[0]), "the sequence length {0} exceeds the caches' "
                "max_seq {1} (onnxruntime does not extend the caches)", seq, cos[0])
    if four and nh:
        ctx.require(D.eq(x[1], nh), f"input dim 1 (heads) is {{0}}: expected num_heads = {nh}",
                    x[1])


@verifier("RotaryEmbedding", 1, domain=MS)
def _rotary_verify(op: OnnxOp):
    nh, rd, _ = attrs(op)
    if op.attrs.is_packed_batching:
        op.fail("is_packed_batching=1 (ragged batches) is not supported")
    if nh < 0 or rd < 0:
        op.fail(f"attributes 'num_heads' = {nh} and 'rotary_embedding_dim' = {rd}: expected "
                f">= 0")
    if rd > 0 and nh == 0:
        op.fail("attribute 'rotary_embedding_dim' needs 'num_heads'")
    x, pos, cos, sin = (op.input(i) for i in range(4))
    et = op.elem(x)
    if et is not None and str(et) not in ("f32", "f16"):
        op.fail(f"input has element type {et}: expected f32 or f16 (onnxruntime's CPU kernel)")
    for name, v in (("cos_cache", cos), ("sin_cache", sin)):
        if et is not None and op.elem(v) is not None and op.elem(v) != et:
            op.fail(f"input '{name}' has element type {op.elem(v)}: expected input's ({et})")
    xs, ps, cs, ss = (op.shape(v) for v in (x, pos, cos, sin))
    if xs is not None and len(xs) not in (3, 4):
        op.fail(f"input 'input' has shape {fmt(xs)}: expected rank 3 or 4")
    if ps is not None and len(ps) > 2:
        op.fail(f"input 'position_ids' has shape {fmt(ps)}: expected one element or "
                f"[batch, sequence]")
    for name, s in (("cos_cache", cs), ("sin_cache", ss)):
        if s is not None and len(s) != 2:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 2 [max_seq, rot / 2]")
    if xs is None or ps is None or cs is None or ss is None:
        return
    rotary_geometry(op, xs, cs[1] if cs[1] is not None else ss[1])
    rotary_checks(D.inference_checks(op), op, D.from_static(xs), D.from_static(ps),
                  D.from_static(cs), D.from_static(ss))


shape_rule("RotaryEmbedding", 1, domain=MS)(same_as_input)
