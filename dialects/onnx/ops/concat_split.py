"""Concat and Split.

Split sizes come from the ``split`` attribute (v2, v11), the ``split``
input (v13+), ``num_outputs`` (v18: chunks of ceil(dim / n), the last one
smaller) or, when none is given, equal parts, one per result.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, int_values, norm_axis

CONCAT = (4, 11, 13)


def _concat(op: OnnxOp):
    ins = op.variadic()
    if not ins:
        op.fail("needs at least one input")
    return concat_dims(op, [op.shape(v) for v in ins], op.attrs.axis)


def concat_dims(op: OnnxOp, shapes: list, axis: int):
    """The result shape of concatenating tensors of ``shapes`` (None =
    unranked) along ``axis`` (also QLinearConcat's, qlinear.py)."""
    ranked = [s for s in shapes if s is not None]
    if not ranked:
        return None
    r = len(ranked[0])
    for s in ranked:
        if len(s) != r:
            op.fail(f"inputs must have the same rank: "
                    f"{' vs '.join(fmt(s) for s in shapes)}")
    if r == 0:
        op.fail("cannot concatenate scalars (inputs have rank 0)")
    axis = norm_axis(op, axis, r)
    out = []
    for k in range(r):
        if k == axis:
            dims = [None if s is None else s[k] for s in shapes]
            out.append(None if None in dims else sum(dims))
            continue
        static = {s[k] for s in ranked if s[k] is not None}
        if len(static) > 1:
            op.fail(f"inputs differ in dim {k} (axis is {axis}): "
                    f"{' vs '.join(fmt(s) for s in shapes)}")
        out.append(static.pop() if static else None)
    return out


@shape_rule("Concat", *CONCAT)
def _concat_shape(op: OnnxOp):
    ins = op.variadic()
    et = next((op.elem(v) for v in ins if op.elem(v) is not None), None)
    if et is None:
        return [None]
    return [tensor(_concat(op), et)]


@verifier("Concat", *CONCAT)
def _concat_verify(op: OnnxOp):
    _concat(op)


SPLIT = (2, 11, 13, 18)


def split_sizes(ctx: D.ShapeChecks, dim, split, n: int, num_outputs: bool, axis: int):
    """Sizes of the n parts of ``dim``: ``split`` (a list of dims) when
    given, else ``num_outputs`` chunks of ceil(dim / n) (where they overrun
    the dim, as 5 into 4 chunks of 2, later parts are clipped as the ONNX
    reference slices them: [2, 2, 1, 0]), else n equal parts."""
    if split is not None:
        total = 0
        for sz in split:
            ctx.require(D.ge(sz, 0), "split has the negative size {0}", sz)
            total = total + sz
        ctx.require(D.eq(total, dim), f"split sizes sum to {{0}}, but dim {axis} is {{1}}",
                    total, dim)
        return list(split)
    if num_outputs:
        chunk = D.ceil_div(dim, n)
        return [D.dmax(0, D.dmin(dim, chunk * (i + 1)) - D.dmin(dim, chunk * i))
                for i in range(n)]
    ctx.require(D.eq(dim % n, 0), f"dim {axis} ({{0}}) is not divisible by the {n} outputs",
                dim)
    return [dim // n] * n


def _split(op: OnnxOp):
    """Per-result shapes (list of shape-or-None)."""
    n = len(op.results)
    s = op.shape(op.input(0))
    if op.version < 13:
        split = op.attrs.split
        given = split is not None
    else:
        given = op.input(1) is not None
        split = int_values(op.input(1)) if given else None
    num = op.attrs.num_outputs if op.version >= 18 else None
    if op.version >= 18:
        if given and num is not None:
            op.fail("cannot have both the 'split' input and the 'num_outputs' attribute")
        if not given and num is None:
            op.fail("either the 'split' input or the 'num_outputs' attribute is required")
        if num is not None and num != n:
            op.fail(f"num_outputs is {num} but the node has {n} outputs")
        if num is not None and num < 1:
            op.fail(f"num_outputs must be positive, got {num}")
    if split is not None and len(split) != n:
        op.fail(f"split {list(split)} has {len(split)} entries but the node has {n} outputs")
    if s is None:
        return [None] * n
    axis = norm_axis(op, op.attrs.axis, len(s))
    if given:
        split = [D.UNKNOWN] * n if split is None else \
            [D.UNKNOWN if x is None else x for x in split]
    sizes = split_sizes(D.inference_checks(op), D.from_static(s)[axis], split, n,
                        num is not None, axis)
    return [[x if k != axis else sz for k, x in enumerate(s)] for sz in D.to_static(sizes)]


@shape_rule("Split", *SPLIT)
def _split_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    return [tensor(sh, et) for sh in _split(op)]


@verifier("Split", *SPLIT)
def _split_verify(op: OnnxOp):
    _split(op)
