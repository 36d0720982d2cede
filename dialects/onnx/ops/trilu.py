"""Trilu: the input's shape (rank >= 2); k is a scalar (or one element)."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt, same_as_input


shape_rule("Trilu", 14)(same_as_input)


@verifier("Trilu", 14)
def _trilu_verify(op: OnnxOp):
    r = op.rank(op.input(0))
    if r is not None and r < 2:
        op.fail(f"input must have rank >= 2, got rank {r}")
    k = op.shape(op.input(1))
    if k is not None and len(k) != 0 and not (len(k) == 1 and k[0] in (1, None)):
        op.fail(f"k must be a scalar, got shape {fmt(k)}")
