"""Dropout (output + optional mask).

Output and mask have the data's shape; the mask is T (the data type) in v7
and bool since v10. v12+ take ratio / training_mode as optional scalar
inputs instead of the ratio attribute.
"""
from __future__ import annotations


import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

DROPOUT_VERSIONS = (7, 10, 12, 13, 22)


def _check_ratio(op: OnnxOp, ratio, what):
    if ratio is not None and not 0.0 <= float(ratio) < 1.0:
        op.fail(f"{what} = {float(ratio):g}: expected a value in [0, 1)")


@verifier("Dropout", *DROPOUT_VERSIONS)
def _dropout_verify(op: OnnxOp):
    if op.version < 12:
        _check_ratio(op, op.attrs.ratio, "attribute 'ratio'")
        return
    for i, name in ((1, "ratio"), (2, "training_mode")):
        s = op.shape(op.input(i))
        if s is not None and len(s) != 0:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected a scalar (rank 0), "
                    f"got rank {len(s)}")
    r = op.const(op.input(1))
    if r is not None and r.size == 1:
        _check_ratio(op, r.reshape(()), "input 'ratio'")


@shape_rule("Dropout", *DROPOUT_VERSIONS)
def _dropout_shape(op: OnnxOp):
    x = op.input(0)
    et, shape = op.elem(x), op.shape(x)
    out = [tensor(shape, et) if et is not None else None]
    if len(op.results) > 1:
        mask_et = et if op.version < 10 else ir.IntegerType.get_signless(1)
        out.append(tensor(shape, mask_et) if mask_et is not None else None)
    return out
