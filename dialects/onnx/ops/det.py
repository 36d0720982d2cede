"""Det: the determinant of square matrices, [*, M, M] -> [*] (lowering:
passes/onnx_to_linalg/det.py, LU with partial pivoting)."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt


@shape_rule("Det", 11, 22)
def _det_shape(op: OnnxOp):
    x, et = op.shape(op.input(0)), op.elem(op.input(0))
    if et is None:
        return [None]
    return [tensor(None if x is None else x[:-2], et)]


@verifier("Det", 11, 22)
def _det_verify(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None and (len(x) < 2 or None not in x[-2:] and x[-1] != x[-2]):
        op.fail(f"input has shape {fmt(x)}: expected [*, M, M]")
