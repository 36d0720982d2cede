"""CumSum and CumProd: the input's shape; axis is a scalar (or 1-element)
tensor."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import (check_flag, const_value, fmt, norm_axis,
                                                   same_as_input)


shape_rule("CumSum", 11, 14)(same_as_input)


@verifier("CumSum", 11, 14)
@verifier("CumProd", 26)
def _cumsum_verify(op: OnnxOp):
    check_flag(op, "exclusive")
    check_flag(op, "reverse")
    a = op.shape(op.input(1))
    if a is not None and not (len(a) == 0 or a == (1,)):
        op.fail(f"axis must be a scalar, got shape {fmt(a)}")
    c = const_value(op.input(1))
    r = op.rank(op.input(0))
    if c is not None and c.size == 1 and r is not None:
        norm_axis(op, int(c.reshape(()).item()), r)


shape_rule("CumProd", 26)(same_as_input)
