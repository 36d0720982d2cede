"""Reshape, Flatten, Squeeze, Unsqueeze, Identity (Expand/Tile: expand_tile.py).

Shape operands (Reshape's ``shape``, Squeeze/Unsqueeze ``axes`` from v13,
Expand's ``shape``, Tile's ``repeats``) are read with ``int_values``: known
elements give static dims, unknown elements give ``?``.
"""
from __future__ import annotations

import math

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, int_values, norm_axes, single_result

# --------------------------------------------------------------------------
# Reshape
# --------------------------------------------------------------------------
RESHAPE = (1, 5, 13, 14, 19, 21, 23, 24, 25)


def _reshape_target(op: OnnxOp) -> list[int | None] | None:
    if op.version == 1:
        return op.attrs.shape
    return int_values(op.input(1))


def fmt_dims(ds) -> str:
    """``[2x?x4]`` for dims of any kind (static parts only)."""
    if ds is None:
        return "<unranked>"
    return "[" + "x".join(str(int(d)) if D.is_static(d) else "?" for d in ds) + "]"


def fmt_target(t) -> str:
    return "[" + ", ".join(str(int(d)) if D.is_static(d) and d is not None else "?"
                           for d in t) + "]"


def _count(conds) -> D.Dim:
    return sum((D.select(c, 1, 0) for c in conds), 0)


def _any(conds):
    out = False
    for c in conds:
        out = D.either(out, c)
    return out


def reshape_dims(ctx: D.ShapeChecks, in_dims: list | None, target: list, allowzero: bool
                 ) -> list:
    """Reshape's result dims (the shape logic of Reshape, for the rule and the
    lowering). ``in_dims``: the input's dims (None: rank unknown); ``target``:
    the shape operand's elements (ints, ``UNKNOWN`` or run-time values).
    ``0`` copies the input dim (unless ``allowzero``), ``-1`` is
    ``numel / product(other dims)``; the element count must match."""
    st, si = fmt_target(target), fmt_dims(in_dims)
    negs = [D.eq(t, -1) for t in target]
    ctx.require(D.le(_count(negs), 1), f"shape {st} has more than one -1")
    for t in target:
        ctx.require(D.ge(t, -1), f"shape {st} has invalid dim {{0}} (must be >= -1)", t)
    zeros = [D.eq(t, 0) for t in target]
    if allowzero:
        ctx.require(D.negate(D.both(_any(zeros), _any(negs))),
                    f"shape {st} has both 0 and -1 with allowzero=1")
    out, copied = [], set()
    for i, (t, z) in enumerate(zip(target, zeros)):
        if allowzero or z is False:
            out.append(t)
            continue
        if in_dims is not None and i >= len(in_dims):
            ctx.require(D.negate(z), f"shape {st}: dim {i} is 0 (copy input dim) but the "
                                     f"input {si} has rank {len(in_dims)}")
            out.append(t)
            continue
        src = D.UNKNOWN if in_dims is None else in_dims[i]
        if z is True:
            copied.add(i)            # cancels out of the -1 computation
        out.append(D.select(z, src, t))
    numel = D.UNKNOWN if in_dims is None else D.product(in_dims)
    any_neg = _any(negs)
    if any_neg is not False:
        num = D.UNKNOWN if in_dims is None else \
            D.product([d for j, d in enumerate(in_dims) if j not in copied])
        others = D.product([D.select(negs[j], 1, out[j]) for j in range(len(out))
                            if j not in copied])
        den = D.dmax(others, 1)      # no division by zero, even on bad input
        ctx.require(D.either(D.negate(any_neg), D.eq(num % den, 0)),
                    f"cannot reshape input {si} to {st}: {{0}} elements are not "
                    f"divisible by {{1}}", num, den)
        q = num // den
        out = [D.select(n, q, d) for n, d in zip(negs, out)]
    # the product below is computed in i64 at run time: [4, 2**62 + 3] wraps
    # to 12. A dim of a true reshape divides a non-zero count, and an empty
    # result has a 0 dim: anything else is a product that overflowed.
    fits = _any([D.eq(d, 0) for d in out]) if out else False
    fits = D.either(D.gt(numel, 0), fits)
    for d in out:
        fits = D.both(fits, D.either(D.eq(numel, 0), D.le(d, numel)))
    ctx.require(fits, f"cannot reshape input {si} ({{0}} elements) to {fmt_dims(out)}: "
                      f"the product of its dims overflows", numel)
    ctx.require(D.eq(numel, D.product(out)),
                f"cannot reshape input {si} ({{0}} elements) to {fmt_dims(out)} "
                f"({{1}} elements)", numel, D.product(out))
    return out


def _reshape_dims(op: OnnxOp, check: bool):
    target = _reshape_target(op)
    if target is None:
        return None
    allowzero = op.version >= 14 and op.attrs.allowzero == 1
    ctx = D.inference_checks(op) if check else D.ShapeChecks(lambda _m: None)
    out = reshape_dims(ctx, D.from_static(op.shape(op.input(0))), D.from_static(target),
                       allowzero)
    return D.to_static(out)


shape_rule("Reshape", *RESHAPE)(single_result(lambda op: _reshape_dims(op, False)))


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
    if not given:  # a dynamic dim is taken as not 1 (the lowering checks it at run time)
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


shape_rule("Squeeze", *SQUEEZE)(single_result(lambda op: _squeeze(op, False)))


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


shape_rule("Unsqueeze", *UNSQUEEZE)(single_result(_unsqueeze))


@verifier("Unsqueeze", *UNSQUEEZE)
def _unsqueeze_verify(op: OnnxOp):
    _unsqueeze(op)


# --------------------------------------------------------------------------
# Flatten: [prod(d[:axis]), prod(d[axis:])]; axis in [0, r] for v1/v9, [-r, r] since v11
# --------------------------------------------------------------------------
FLATTEN_VERSIONS = (1, 9, 11, 13, 21, 23, 24, 25)


def _flatten(op: OnnxOp):
    x = op.shape(op.input(0))
    axis = op.attrs.axis
    if x is None:
        if op.version < 11 and axis < 0:
            op.fail(f"attribute 'axis' = {axis}: expected >= 0 (negative axes need opset 11)")
        return None
    r = len(x)
    lo = 0 if op.version < 11 else -r
    if not lo <= axis <= r:
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{lo}, {r}] for input of rank {r}")
    if axis < 0:
        axis += r

    def prod(ds):
        return None if any(d is None for d in ds) else math.prod(ds)
    return (prod(x[:axis]), prod(x[axis:]))


@verifier("Flatten", *FLATTEN_VERSIONS)
def _flatten_verify(op: OnnxOp):
    _flatten(op)


@shape_rule("Flatten", *FLATTEN_VERSIONS)
def _flatten_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _flatten(op)
    return [tensor(shape if shape is not None else (None, None), et) if et is not None else None]


# --------------------------------------------------------------------------
# Identity passes any type through (tensors, and sequences/optionals since v14).
# --------------------------------------------------------------------------
IDENTITY_VERSIONS = (1, 13, 14, 16, 19, 21, 23, 24, 25)


@shape_rule("Identity", *IDENTITY_VERSIONS)
def _identity_shape(op: OnnxOp):
    t = op.input(0).type
    return [None if str(t) == "!onnx.unknown" else t]
