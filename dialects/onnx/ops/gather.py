"""Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor
from .common import const_value, fmt, norm_axis


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


@shape_rule("Gather", 1, 11, 13)
def _gather_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_gather(op, False), et)]


@verifier("Gather", 1, 11, 13)
def _gather_verify(op: OnnxOp):
    _gather(op, True)


# --------------------------------------------------------------------------
# GatherElements: indices' shape
# --------------------------------------------------------------------------
def _same_rank(op: OnnxOp, a: str, sa, b: str, sb):
    if sa is not None and sb is not None and len(sa) != len(sb):
        op.fail(f"{a} {fmt(sa)} and {b} {fmt(sb)} must have the same rank")


@shape_rule("GatherElements", 11, 13)
def _gather_elements_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(op.shape(op.input(1)), et)]


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
    if d is not None and i is not None:
        for k in range(b):
            if d[k] is not None and i[k] is not None and d[k] != i[k]:
                op.fail(f"batch dim {k} differs: data {fmt(d)} vs indices {fmt(i)}")
    if i is None or d is None or i[-1] is None:
        return None
    last = i[-1]
    if last > len(d) - b:
        op.fail(f"indices {fmt(i)} index {last} dims, but data {fmt(d)} has only "
                f"{len(d) - b} after batch_dims {b}")
    return list(i[:-1]) + list(d[b + last:])


@shape_rule("GatherND", 11, 12, 13)
def _gather_nd_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_gather_nd(op), et)]


@verifier("GatherND", 11, 12, 13)
def _gather_nd_verify(op: OnnxOp):
    _gather_nd(op)


# --------------------------------------------------------------------------
# Scatter*: the result has the shape of data
# --------------------------------------------------------------------------
def _data_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(op.shape(op.input(0)), et)]


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


def _scatter_nd_verify(op: OnnxOp):
    d, i, u = (op.shape(op.input(k)) for k in range(3))
    if d is not None and len(d) < 1 or i is not None and len(i) < 1:
        op.fail(f"data {fmt(d)} and indices {fmt(i)} must have rank >= 1")
    if d is None or i is None or u is None or i[-1] is None:
        return
    k = i[-1]
    if k > len(d):
        op.fail(f"indices {fmt(i)} index {k} dims, but data {fmt(d)} has rank {len(d)}")
    want = list(i[:-1]) + list(d[k:])
    if len(u) != len(want) or any(a is not None and b is not None and a != b
                                  for a, b in zip(u, want)):
        op.fail(f"updates {fmt(u)} must have shape {fmt(want)} "
                f"(indices {fmt(i)}, data {fmt(d)})")


for _t, _vs, _verify in (("Scatter", (9, 11), _scatter_elements_verify),
                         ("ScatterElements", (11, 13, 16, 18), _scatter_elements_verify),
                         ("ScatterND", (11, 13, 16, 18), _scatter_nd_verify)):
    shape_rule(_t, *_vs)(_data_shape)
    verifier(_t, *_vs)(_verify)
