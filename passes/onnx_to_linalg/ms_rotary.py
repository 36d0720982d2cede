"""com.microsoft RotaryEmbedding -> linalg (onnxruntime's CPU kernel).

The ONNX RotaryEmbedding (v23) has no lowering of its own to share (it is
compiled through its function body); this one is written on the same
rotation, in three steps:

    pos[b, s]        = position_ids[b, s], or position_ids[0] + s
    cos_g, sin_g     = cos_cache[pos[b, s], i], sin_cache[...]      [B, S, rot/2]
    y                = x, with the first ``rot`` elements of each head rotated

The rotated part of each head is viewed as [2, rot/2] (halves) or
[rot/2, 2] (interleaved pairs), so element (k, i) and its partner (1 - k, i)
are both affine reads: y = x * cos - partner * sin for k = 0, x * cos +
partner * sin for k = 1, computed in f32. A 3-D input [B, S, hidden] is
viewed as [B, S, heads, head_size]; the unrotated rest of each head is
input's (``tensor.insert_slice`` of the rotated part).

Run-time checks (a failing call naming the node, where onnxruntime fails
too): position ids in [0, max_seq) (an offset: offset + S <= max_seq),
position_ids [B, S] or one element, caches of one shape, S <= max_seq,
a dynamic 4-D head count = num_heads.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_rotary import MS, attrs, rotary_checks, rotary_geometry
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, insert_slice,
                                                            loop_index, to_index)

_P = arith.CmpIPredicate


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _pos_range(b: LoweringContext, pos: ir.Value):
    """(min, max) of a 2-D i64 tensor as i64 scalars (one reduction)."""
    i64 = _i64()
    lo = b.full([], i64, (1 << 63) - 1)
    hi = b.full([], i64, -(1 << 63))
    mn, mx = b.generic([pos], [lo, hi], [affine_map(2, [0, 1]), affine_map(2, []),
                                         affine_map(2, [])], ["reduction"] * 2,
                       lambda v, a, c: [arith.minsi(a, v), arith.maxsi(c, v)])
    return tensor.extract(mn, []), tensor.extract(mx, [])


def _gather_caches(op: OnnxOp, b: LoweringContext, pos: ir.Value, cos: ir.Value,
                   sin: ir.Value, bsz, seq, half: int):
    """cos / sin rows of each token's position: two [B, S, half] tensors.
    Positions are checked to be in range first (nothing reads out of bounds)."""
    i64 = _i64()
    max_seq = b.dim(cos, 0)
    ms = arith.index_cast(i64, b.as_index(max_seq))
    if pos.type.rank < 2:        # one element: the position of token 0
        base = tensor.extract(pos, [b.index(0)] * pos.type.rank)
        end = arith.addi(base, arith.index_cast(i64, b.as_index(seq)))
        ok = arith.andi(arith.cmpi(_P.sge, base, arith.constant(i64, 0)),
                        arith.cmpi(_P.sle, end, ms))
        b.require(ok, f"node '{op.name}' ({op.op_type}): position_ids offset {{0}} with "
                  f"sequence length {{1}} exceeds the caches' range [0, {{2}})", base,
                  b.as_index(seq), b.as_index(max_seq))
        base_ix = to_index(base)
        ins, maps = [], []

        def position(*_):
            return arith.addi(base_ix, loop_index(1))
    else:
        lo, hi = _pos_range(b, pos)
        ok = arith.andi(arith.cmpi(_P.sge, lo, arith.constant(i64, 0)),
                        arith.cmpi(_P.slt, hi, ms))
        b.require(ok, f"node '{op.name}' ({op.op_type}): position_ids in [{{0}}, {{1}}] are "
                  f"out of the caches' range [0, {{2}})", lo, hi, b.as_index(max_seq))
        ins, maps = [pos], [affine_map(3, [0, 1])]

        def position(p, *_):
            return to_index(p)
    et = cos.type.element_type

    def body(*a):
        p = position(*a)
        i = loop_index(2)
        return [tensor.extract(cos, [p, i]), tensor.extract(sin, [p, i])]
    out = [b.empty([bsz, seq, half], et), b.empty([bsz, seq, half], et)]
    ident = affine_map(3, [0, 1, 2])
    return b.generic(ins, out, maps + [ident, ident], ["parallel"] * 3, body)


@lowering("RotaryEmbedding", 1, domain=MS)
def lower_rotary_embedding(op: OnnxOp, b: LoweringContext):
    if op.attrs.is_packed_batching:
        op.fail("is_packed_batching=1 (ragged batches) is not supported")
    x, pos, cos, sin = (op.input(i) for i in range(4))
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if r not in (3, 4) or not isinstance(et, (ir.F32Type, ir.F16Type)):
        op.fail(f"input must be a 3-D or 4-D f32 or f16 tensor, got {x.type}")
    for name, v in (("cos_cache", cos), ("sin_cache", sin)):
        if b.ranked(op, v, name).rank != 2 or v.type.element_type != et:
            op.fail(f"{name} must be 2-D of input's element type, got {v.type}")
    if b.ranked(op, pos, "position_ids").rank > 2 or \
            pos.type.element_type != _i64():
        op.fail(f"position_ids must be int64 with one element or [batch, sequence], "
                f"got {pos.type}")
    xs = OnnxOp.shape(x)
    width = OnnxOp.shape(cos)[1]
    if width is None:
        width = OnnxOp.shape(sin)[1]
    g = rotary_geometry(op, xs, width)
    if g is None:
        op.fail("input's last dim (the hidden or head size) and the caches' dim 1 must be "
                "static")
    _, _, interleaved = attrs(op)
    rotary_checks(checks(op, b), op, b.ixdims(x), b.ixdims(pos), b.ixdims(cos), b.ixdims(sin))
    dims = b.dims(x)
    half = g.rot // 2
    if g.four:
        bsz, seq = dims[0], dims[2]
        x4 = x
        bs = [0, 2]
    else:
        bsz, seq = dims[0], dims[1]
        x4 = expand(b, x, [[0], [1], [2, 3]], [bsz, seq, g.heads, g.head_size])
        bs = [0, 1]
    d4 = b.dims(x4)
    cos_g, sin_g = _gather_caches(op, b, pos, cos, sin, bsz, seq, half)
    rot_dims = d4[:3] + [g.rot]
    xr = x4 if g.rot == g.head_size else extract_slice(b, x4, [0] * 4, rot_dims)
    pair = [half, 2] if interleaved else [2, half]
    x5 = expand(b, xr, [[0], [1], [2], [3, 4]], d4[:3] + pair)
    k_dim, i_dim = (4, 3) if interleaved else (3, 4)
    dx = [ir.AffineDimExpr.get(k) for k in range(5)]
    partner = list(dx)
    partner[k_dim] = ir.AffineExpr.get_add(ir.AffineConstantExpr.get(1),
                                           ir.AffineExpr.get_mul(dx[k_dim],
                                                                 ir.AffineConstantExpr.get(-1)))
    ident = affine_map(5, list(range(5)))
    table = affine_map(5, bs + [i_dim])
    ct = ir.F32Type.get()

    def up(v):
        return v if v.type == ct else arith.extf(ct, v)

    def body(xv, pv, c, s, _o):
        a, t = arith.mulf(up(xv), up(c)), arith.mulf(up(pv), up(s))
        first = arith.cmpi(_P.eq, loop_index(k_dim), b.index(0))
        y = arith.select(first, arith.subf(a, t), arith.addf(a, t))
        return y if et == ct else arith.truncf(et, y)
    y5 = b.generic([x5, x5, cos_g, sin_g], [b.empty(b.dims(x5), et)],
                   [ident, ir.AffineMap.get(5, 0, partner), table, table, ident],
                   ["parallel"] * 5, body)[0]
    y4 = collapse_to(b, y5, [[0], [1], [2], [3, 4]], rot_dims)
    if g.rot != g.head_size:
        y4 = insert_slice(y4, x4, [0] * 4, rot_dims)
    y = y4 if g.four else collapse_to(b, y4, [[0], [1], [2, 3]], dims)
    return [b.cast_to(y, b.result_type(op))]

