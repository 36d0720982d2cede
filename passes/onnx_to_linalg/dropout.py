"""Dropout in inference mode: the output is the input, the mask (if used)
all true (v10+: bool; v7: a tensor of ones of the input type).
``training_mode`` must be absent or a constant false."""
from __future__ import annotations

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np


@lowering("Dropout", 7, 10, 12, 13, 22)
def lower_dropout(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    if op.version >= 12 and op.input(2) is not None:
        t = const_np(op.input(2))
        if t is None:
            op.fail("training_mode must be a constant (inference only)")
        if bool(t.reshape(-1)[0]):
            op.fail("training_mode=true is not supported (inference only)")
    outs = [x]
    if len(op.op.results) > 1:
        mt = b.result_type(op, 1)
        outs.append(b.full(b.dims(x), mt.element_type, 1.0 if op.version < 10 else 1))
    return outs
