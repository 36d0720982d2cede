"""Reduce*, ArgMax/ArgMin (TopK: selection.py, CumSum: cumsum.py).

Reduce* take ``axes`` as an attribute up to ReduceSum v11 / the others v13
and as an optional input from ReduceSum v13 / the others v18 (with
``noop_with_empty_axes``). No (or empty) axes reduce every dim.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import (check_flag, const_ints, i64, known_len,
                                                   norm_axes, norm_axis)

# op type -> (versions with the axes attribute, versions with the axes input)
REDUCE = {
    "ReduceSum": ((1, 11), (13,)),
    "ReduceMean": ((1, 11, 13), (18,)),
    "ReduceMax": ((1, 11, 12, 13), (18, 20)),
    "ReduceMin": ((1, 11, 12, 13), (18, 20)),
    "ReduceProd": ((1, 11, 13), (18,)),
    "ReduceL1": ((1, 11, 13), (18,)),
    "ReduceL2": ((1, 11, 13), (18,)),
    "ReduceLogSum": ((1, 11, 13), (18, 28)),
    "ReduceLogSumExp": ((1, 11, 13), (18, 28)),
    "ReduceSumSquare": ((1, 11, 13), (18,)),
}


def _reduce(op: OnnxOp, axes_input: bool):
    s = op.shape(op.input(0))
    check_flag(op, "keepdims")
    keep = op.attrs.keepdims == 1
    noop = axes_input and op.attrs.noop_with_empty_axes == 1
    if axes_input:
        v = op.input(1)
        axes = None if v is None else const_ints(v)
        if v is not None and axes is None:  # axes not constant
            if s is None:
                return None
            if keep:
                return [1 if d == 1 else None for d in s]
            n = known_len(v)
            return None if n is None or n == 0 else [None] * (len(s) - n)
    else:
        axes = op.attrs.axes
    if s is None:
        return None
    if not axes:
        if noop:
            return list(s)
        axes = range(len(s))
    ax = norm_axes(op, list(axes), len(s))
    if keep:
        return [1 if k in ax else d for k, d in enumerate(s)]
    return [d for k, d in enumerate(s) if k not in ax]


def _register_reduce(op_type, attr_vs, input_vs):
    def shape(op: OnnxOp, axes_input):
        et = op.elem(op.input(0))
        return [None if et is None else tensor(_reduce(op, axes_input), et)]
    shape_rule(op_type, *attr_vs)(lambda op: shape(op, False))
    shape_rule(op_type, *input_vs)(lambda op: shape(op, True))
    verifier(op_type, *attr_vs)(lambda op: _reduce(op, False))
    verifier(op_type, *input_vs)(lambda op: _reduce(op, True))


for _t, (_a, _i) in REDUCE.items():
    _register_reduce(_t, _a, _i)


# --------------------------------------------------------------------------
# ArgMax / ArgMin
# --------------------------------------------------------------------------
def _arg(op: OnnxOp):
    check_flag(op, "keepdims")
    s = op.shape(op.input(0))
    if s is None:
        return None
    if len(s) == 0:
        op.fail("input must have rank >= 1, got a scalar")
    a = norm_axis(op, op.attrs.axis, len(s))
    if op.attrs.keepdims == 1:
        return [1 if k == a else d for k, d in enumerate(s)]
    return [d for k, d in enumerate(s) if k != a]


for _t in ("ArgMax", "ArgMin"):
    shape_rule(_t, 1, 11, 12, 13)(lambda op: [tensor(_arg(op), i64())])
    verifier(_t, 1, 11, 12, 13)(_arg)


