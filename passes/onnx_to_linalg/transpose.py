"""Transpose -> linalg.transpose (default perm: the dims reversed)."""
from __future__ import annotations

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, val


@lowering("Transpose", 1, 13, 21, 23, 24, 25)
def lower_transpose(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    perm = op.attrs.perm or list(range(r))[::-1]
    dims = b.dims(x)
    init = b.empty([dims[p] for p in perm], x.type.element_type)
    return [val(linalg.transpose(x, outs=[init], permutation=list(perm)))]
