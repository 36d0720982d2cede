"""Reshape, Squeeze, Unsqueeze, Expand, Tile, DepthToSpace, SpaceToDepth, Trilu.

Shape operands (Reshape's ``shape``, Squeeze/Unsqueeze ``axes`` from v13,
Expand's ``shape``, Tile's ``repeats``) are read with ``int_values``: known
elements give static dims, unknown elements give ``?``.
"""
from __future__ import annotations

import math

from onnx_mlir_py.registry import shape_rule, verifier
from .. import dims as D
from ..opview import OnnxOp, tensor
from .broadcast import broadcast_shapes
from .common import const_ints, fmt, int_values, norm_axes, norm_axis

# --------------------------------------------------------------------------
# Reshape
# --------------------------------------------------------------------------
RESHAPE = (1, 5, 13, 14, 19, 21, 23, 24, 25)


def _reshape_target(op: OnnxOp) -> list[int | None] | None:
    if op.version == 1:
        return op.attrs.shape
    return int_values(op.input(1))


def _reshape_dims(op: OnnxOp, check: bool):
    data = op.shape(op.input(0))
    target = _reshape_target(op)
    if target is None:
        return None
    allowzero = op.version >= 14 and op.attrs.allowzero == 1
    known = [d for d in target if d is not None]
    if check:
        if known.count(-1) > 1:
            op.fail(f"shape {fmt_target(target)} has more than one -1")
        bad = [d for d in known if d < -1]
        if bad:
            op.fail(f"shape {fmt_target(target)} has invalid dim {bad[0]} (must be >= -1)")
        if allowzero and 0 in known and -1 in known:
            op.fail(f"shape {fmt_target(target)} has both 0 and -1 with allowzero=1")
    out: list[int | None] = []
    copied = set()
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if data is None:
                out.append(None)
                continue
            if i >= len(data):
                if check:
                    op.fail(f"shape {fmt_target(target)}: dim {i} is 0 (copy input dim) "
                            f"but the input {fmt(data)} has rank {len(data)}")
                out.append(None)
                continue
            out.append(data[i])
            copied.add(i)
        else:
            out.append(d)
    if -1 in out:
        k = out.index(-1)
        out[k] = None
        rest = [d for j, d in enumerate(out) if j != k and j not in copied]
        ins = None if data is None else [d for j, d in enumerate(data) if j not in copied]
        if ins is not None and None not in ins and None not in rest:
            num, den = math.prod(ins), math.prod(rest)
            if den == 0 or num % den:
                if check:
                    op.fail(f"cannot reshape input {fmt(data)} to {fmt_target(target)}: "
                            f"{math.prod(data)} elements are not divisible by {den}")
            else:
                out[k] = num // den
    elif check and data is not None and None not in data and None not in out:
        if math.prod(data) != math.prod(out):
            op.fail(f"cannot reshape input {fmt(data)} ({math.prod(data)} elements) to "
                    f"{fmt(out)} ({math.prod(out)} elements)")
    return out


def fmt_target(t) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in t) + "]"


@shape_rule("Reshape", *RESHAPE)
def _reshape_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    return [tensor(_reshape_dims(op, False), et)]


@verifier("Reshape", *RESHAPE)
def _reshape_verify(op: OnnxOp):
    if op.version > 1:
        r = op.rank(op.input(1))
        if r is not None and r != 1:
            op.fail(f"shape input must be 1-D, got rank {r}")
    _reshape_dims(op, True)


# --------------------------------------------------------------------------
# Squeeze / Unsqueeze
# --------------------------------------------------------------------------
SQUEEZE = (1, 11, 13, 21, 23, 24, 25)


def _axes_of(op: OnnxOp, attr_versions_below: int = 13):
    """(axes list or None, given?) from the attribute (old) or input (new)."""
    if op.version < attr_versions_below:
        axes = op.attrs.axes
        if op.version < 11 and axes is not None and any(a < 0 for a in axes):
            op.fail(f"axes {list(axes)}: v{op.version} takes non-negative axes only "
                    f"(negative axes need v11)")
        return (list(axes) if axes is not None else None), axes is not None
    v = op.input(1)
    if v is None:
        return None, False
    return const_ints(v), True


def squeeze_dims(ctx: D.ShapeChecks, data: list, flags: list, out_rank: int) -> list:
    """Dims left when the dims ``i`` with ``flags[i]`` are removed (a flag is a
    bool or a run-time condition); each removed dim must be 1 and exactly
    ``out_rank`` dims must stay. Shared by the shape rule (static flags) and
    the lowering (flags from run-time axes or from dims equal to 1)."""
    out: list = [0] * out_rank
    kept: D.Dim = 0
    for i, d in enumerate(data):
        f = flags[i]
        if f is not False:
            ctx.require(D.either(D.negate(f), D.eq(d, 1)),
                        f"cannot squeeze axis {i}: dim is {{0}}, not 1", d)
        for k in range(out_rank):
            out[k] = out[k] + D.select(D.both(D.negate(f), D.eq(kept, k)), d, 0)
        kept = kept + D.select(f, 0, 1)
    ctx.require(D.eq(kept, out_rank), f"axes leave {{0}} dims, the result has rank {out_rank}",
                kept)
    return out


def unsqueeze_dims(ctx: D.ShapeChecks, data: list, flags: list) -> list:
    """Result dims of Unsqueeze: 1 where ``flags[k]`` (a result position named
    by axes), else the next dim of ``data``; ``len(flags)`` is the result rank."""
    out = []
    used: D.Dim = 0
    for f in flags:
        src: D.Dim = 0
        for i, d in enumerate(data):
            src = src + D.select(D.eq(used, i), d, 0)
        out.append(D.select(f, 1, src))
        used = used + D.select(f, 0, 1)
    ctx.require(D.eq(used, len(data)), f"axes leave {{0}} of the result's {len(flags)} dims "
                f"for the input's {len(data)}", used)
    return out


def axis_flags(axes: list, rank: int) -> list:
    """Normalized constant axes -> one bool per position."""
    return [i in axes for i in range(rank)]


def _squeeze(op: OnnxOp, check: bool):
    data = op.shape(op.input(0))
    axes, given = _axes_of(op)
    if data is None:
        return None
    r = len(data)
    ctx = D.inference_checks(op) if check else D.ShapeChecks(lambda m: None)
    if not given:
        if None in data:
            return None
        flags = [d == 1 for d in data]
    elif axes is None:  # axes not constant: rank known only if their count is
        n = op.shape(op.input(1))
        if n is not None and len(n) == 1 and n[0] is not None:
            return [None] * (r - n[0])
        return None
    else:
        flags = axis_flags(norm_axes(op, axes, r), r)
    out_rank = r - sum(flags)
    return D.to_static(squeeze_dims(ctx, D.from_static(data), flags, out_rank))


@shape_rule("Squeeze", *SQUEEZE)
def _squeeze_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_squeeze(op, False), et)]


@verifier("Squeeze", *SQUEEZE)
def _squeeze_verify(op: OnnxOp):
    _squeeze(op, True)


UNSQUEEZE = (1, 11, 13, 21, 23, 24, 25)


def _unsqueeze(op: OnnxOp):
    data = op.shape(op.input(0))
    axes, given = _axes_of(op)
    if op.version < 13 and not given:
        op.fail("attribute 'axes' is required")
    if data is None:
        return None
    if axes is None:
        n = op.shape(op.input(1))
        if n is not None and len(n) == 1 and n[0] is not None:
            return [None] * (len(data) + n[0])
        return None
    r = len(data) + len(axes)
    flags = axis_flags(norm_axes(op, axes, r), r)
    return D.to_static(unsqueeze_dims(D.inference_checks(op), D.from_static(data), flags))


@shape_rule("Unsqueeze", *UNSQUEEZE)
def _unsqueeze_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_unsqueeze(op), et)]


@verifier("Unsqueeze", *UNSQUEEZE)
def _unsqueeze_verify(op: OnnxOp):
    _unsqueeze(op)


# --------------------------------------------------------------------------
# Expand / Tile
# --------------------------------------------------------------------------
def _expand(op: OnnxOp):
    data = op.shape(op.input(0))
    target = int_values(op.input(1))
    if data is None or target is None:
        return None
    if any(d is not None and d < 0 for d in target):
        op.fail(f"shape {fmt_target(target)} has a negative dim")
    return broadcast_shapes(op, [data, tuple(target)])


@shape_rule("Expand", 8, 13)
def _expand_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_expand(op), et)]


@verifier("Expand", 8, 13)
def _expand_verify(op: OnnxOp):
    r = op.rank(op.input(1))
    if r is not None and r != 1:
        op.fail(f"shape input must be 1-D, got rank {r}")
    _expand(op)


def _tile(op: OnnxOp):
    data = op.shape(op.input(0))
    reps = int_values(op.input(1))
    if data is None:
        return None
    if reps is not None and len(reps) != len(data):
        op.fail(f"repeats has {len(reps)} elements, expected one per input dim "
                f"(input {fmt(data)} has rank {len(data)})")
    if reps is None:
        return [None] * len(data)
    if any(r is not None and r < 0 for r in reps):
        op.fail(f"repeats {fmt_target(reps)} has a negative value")
    return [None if d is None or r is None else d * r for d, r in zip(data, reps)]


@shape_rule("Tile", 6, 13)
def _tile_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_tile(op), et)]


@verifier("Tile", 6, 13)
def _tile_verify(op: OnnxOp):
    r = op.rank(op.input(1))
    if r is not None and r != 1:
        op.fail(f"repeats must be 1-D, got rank {r}")
    _tile(op)


# --------------------------------------------------------------------------
# DepthToSpace / SpaceToDepth
# --------------------------------------------------------------------------
def _mul(a, b):
    return None if a is None else a * b


def _div(op, a, b, what):
    if a is None:
        return None
    if a % b:
        op.fail(f"{what} {a} is not divisible by {b}")
    return a // b


def _d2s(op: OnnxOp):
    s = op.shape(op.input(0))
    b = op.attrs.blocksize
    if b is None or b <= 0:
        op.fail(f"blocksize must be positive, got {b}")
    if s is None:
        return None
    if len(s) != 4:
        op.fail(f"input must be 4-D (N, C, H, W), got {fmt(s)}")
    n, c, h, w = s
    if op.op_type == "DepthToSpace":
        return [n, _div(op, c, b * b, "channel dim"), _mul(h, b), _mul(w, b)]
    return [n, _mul(c, b * b), _div(op, h, b, "height"), _div(op, w, b, "width")]


for _t, _vs in (("DepthToSpace", (1, 11, 13, 28)), ("SpaceToDepth", (1, 13, 28))):
    shape_rule(_t, *_vs)(lambda op: [None if op.elem(op.input(0)) is None
                                     else tensor(_d2s(op), op.elem(op.input(0)))])
    verifier(_t, *_vs)(_d2s)


# --------------------------------------------------------------------------
# Trilu
# --------------------------------------------------------------------------
@shape_rule("Trilu", 14)
def _trilu_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(op.shape(op.input(0)), et)]


@verifier("Trilu", 14)
def _trilu_verify(op: OnnxOp):
    r = op.rank(op.input(0))
    if r is not None and r < 2:
        op.fail(f"input must have rank >= 2, got rank {r}")
    k = op.shape(op.input(1))
    if k is not None and len(k) != 0 and not (len(k) == 1 and k[0] in (1, None)):
        op.fail(f"k must be a scalar, got shape {fmt(k)}")
