"""Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import (const_value, fmt, input_shape, norm_axis,
                                                   same_as_input, single_result)


# --------------------------------------------------------------------------
# Gather: data[:axis] + indices.shape + data[axis+1:]
# --------------------------------------------------------------------------
def _gather(op: OnnxOp, check: bool):
    d, i = op.shape(op.input(0)), op.shape(op.input(1))
    if d is None:
        return None
    if len(d) == 0:
        op.fail("data must have rank >= 1, got a scalar")
    axis = norm_axis(op, op.attrs.axis, len(d))
    if check and d[axis] is not None:
        idx = const_value(op.input(1))
        if idx is not None and idx.size:
            lo, hi = int(idx.min()), int(idx.max())
            n = d[axis]
            bad = lo if lo < -n else (hi if hi >= n else None)
            if bad is not None:
                op.fail(f"index {bad} is out of range for dim {axis} of data {fmt(d)} "
                        f"(expected [{-n}, {n - 1}])")
    if i is None:
        return None
    return list(d[:axis]) + list(i) + list(d[axis + 1:])


shape_rule("Gather", 1, 11, 13)(single_result(lambda op: _gather(op, False)))


@verifier("Gather", 1, 11, 13)
def _gather_verify(op: OnnxOp):
    _gather(op, True)


# --------------------------------------------------------------------------
# GatherElements: indices' shape
# --------------------------------------------------------------------------
def _same_rank(op: OnnxOp, a: str, sa, b: str, sb):
    if sa is not None and sb is not None and len(sa) != len(sb):
        op.fail(f"{a} {fmt(sa)} and {b} {fmt(sb)} must have the same rank")


shape_rule("GatherElements", 11, 13)(single_result(lambda op: input_shape(op, 1)))


@verifier("GatherElements", 11, 13)
def _gather_elements_verify(op: OnnxOp):
    d, i = op.shape(op.input(0)), op.shape(op.input(1))
    _same_rank(op, "data", d, "indices", i)
    if d is not None:
        if len(d) == 0:
            op.fail("data must have rank >= 1, got a scalar")
        norm_axis(op, op.attrs.axis, len(d))


# --------------------------------------------------------------------------
# GatherND: indices[:-1] + data[batch_dims + indices[-1]:]
# --------------------------------------------------------------------------
def nd_depth(op: OnnxOp, i, fixed_rank: int | None, known_rank: int | None):
    """Index depth k of GatherND/ScatterND: the last dim of indices, else what
    a known rank implies (``known_rank - fixed_rank`` = the data dims after
    the indexed ones, so k = len(data) - batch_dims - that); None if unknowable."""
    if i is None:
        return None
    if i[-1] is not None:
        return i[-1]
    if fixed_rank is None or known_rank is None:
        return None
    k = fixed_rank - known_rank
    if k < 1:
        op.fail(f"indices {fmt(i)}: the ranks imply an index depth of {k} (must be >= 1)")
    return k


def gather_nd_dims(ctx: D.ShapeChecks, d: list, i: list, bd: int, k: int) -> list:
    """GatherND result dims indices[:-1] + data[bd + k:] (k = index depth);
    requires the batch dims to agree and indices' last dim to be k."""
    for j in range(bd):
        ctx.require(D.eq(d[j], i[j]), f"batch dim {j} differs: data has {{0}}, indices {{1}}",
                    d[j], i[j])
    ctx.require(D.eq(i[-1], k), f"the last dim of indices is {{0}}: expected the index "
                f"depth {k}", i[-1])
    return list(i[:-1]) + list(d[bd + k:])


def _gather_nd(op: OnnxOp):
    d, i = op.shape(op.input(0)), op.shape(op.input(1))
    b = op.attrs.batch_dims if op.version >= 12 else 0
    if d is not None and len(d) < 1 or i is not None and len(i) < 1:
        op.fail(f"data {fmt(d)} and indices {fmt(i)} must have rank >= 1")
    if b < 0:
        op.fail(f"batch_dims must be >= 0, got {b}")
    for name, s in (("data", d), ("indices", i)):
        if s is not None and b >= len(s):
            op.fail(f"batch_dims {b} must be less than the rank of {name} {fmt(s)}")
    if i is None or d is None:
        return None
    # the result rank (declared, or inferred before) fixes a dynamic depth
    out = op.shape(op.op.results[0])
    last = nd_depth(op, i, len(i) - 1 + len(d) - b, None if out is None else len(out))
    if last is None:
        return None
    if last > len(d) - b:
        op.fail(f"indices {fmt(i)} index {last} dims, but data {fmt(d)} has only "
                f"{len(d) - b} after batch_dims {b}")
    return D.to_static(gather_nd_dims(D.inference_checks(op), D.from_static(d),
                                      D.from_static(i), b, last))


shape_rule("GatherND", 11, 12, 13)(single_result(_gather_nd))


@verifier("GatherND", 11, 12, 13)
def _gather_nd_verify(op: OnnxOp):
    _gather_nd(op)


# --------------------------------------------------------------------------
# Scatter*: the result has the shape of data
# --------------------------------------------------------------------------
def _scatter_elements_verify(op: OnnxOp):
    d, i, u = (op.shape(op.input(k)) for k in range(3))
    _same_rank(op, "data", d, "indices", i)
    if i is not None and u is not None:
        if len(i) != len(u) or any(a is not None and b is not None and a != b
                                   for a, b in zip(i, u)):
            op.fail(f"updates {fmt(u)} must have the shape of indices {fmt(i)}")
    if d is not None:
        if len(d) == 0:
            op.fail("data must have rank >= 1, got a scalar")
        norm_axis(op, op.attrs.axis, len(d))


def scatter_nd_check(ctx: D.ShapeChecks, d: list, i: list, u: list, k: int) -> None:
    """ScatterND: indices' last dim is the index depth k and updates have
    shape indices[:-1] + data[k:] (len(u) must already fit)."""
    ctx.require(D.eq(i[-1], k), f"the last dim of indices is {{0}}: expected the index "
                f"depth {k}", i[-1])
    for j, (a, w) in enumerate(zip(u, list(i[:-1]) + list(d[k:]))):
        ctx.require(D.eq(a, w), f"updates dim {j} is {{0}}: expected {{1}} "
                    f"(indices[:-1] + data[{k}:])", a, w)


def _scatter_nd_verify(op: OnnxOp):
    d, i, u = (op.shape(op.input(k)) for k in range(3))
    if d is not None and len(d) < 1 or i is not None and len(i) < 1:
        op.fail(f"data {fmt(d)} and indices {fmt(i)} must have rank >= 1")
    if d is None or i is None or u is None:
        return
    k = nd_depth(op, i, len(i) - 1 + len(d), len(u))
    if k > len(d):
        op.fail(f"indices {fmt(i)} index {k} dims, but data {fmt(d)} has rank {len(d)}")
    if len(u) != len(i) - 1 + len(d) - k:
        op.fail(f"updates {fmt(u)} must have rank {len(i) - 1 + len(d) - k} "
                f"(indices {fmt(i)}, data {fmt(d)})")
    scatter_nd_check(D.inference_checks(op), D.from_static(d), D.from_static(i),
                     D.from_static(u), k)


for _t, _vs, _verify in (("Scatter", (9, 11), _scatter_elements_verify),
                         ("ScatterElements", (11, 13, 16, 18), _scatter_elements_verify),
                         ("ScatterND", (11, 13, 16, 18), _scatter_nd_verify)):
    shape_rule(_t, *_vs)(same_as_input)
    verifier(_t, *_vs)(_verify)
