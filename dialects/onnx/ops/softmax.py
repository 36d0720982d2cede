"""Softmax, LogSoftmax, Hardmax.

v1/v11 coerce the input to 2-D at ``axis`` ([prod(d[:axis]), prod(d[axis:])])
and normalize each row; v13 normalizes along ``axis`` alone. The output has
the input's shape either way, so one rule covers all three versions; only
the axis range check is shared too ([-r, r-1]).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor

VERSIONS = (1, 11, 13)


def _softmax_verify(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is None:
        return
    r, axis = len(x), op.attrs.axis
    if r == 0:
        op.fail("input 'input' is a scalar: expected rank >= 1")
    if not -r <= axis < r:
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{-r}, {r - 1}] for input of "
                f"rank {r}")


def _softmax_shape(op: OnnxOp):
    _softmax_verify(op)
    x = op.input(0)
    et = op.elem(x)
    return [tensor(op.shape(x), et) if et is not None else None]


for _op in ("Softmax", "LogSoftmax", "Hardmax"):
    verifier(_op, *VERSIONS)(_softmax_verify)
    shape_rule(_op, *VERSIONS)(_softmax_shape)
