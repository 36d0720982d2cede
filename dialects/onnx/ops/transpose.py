"""Transpose: ``perm`` (default: reversed dims) must permute the input dims."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor

TRANSPOSE = (1, 13, 21, 23, 24, 25)


def _perm(op: OnnxOp):
    s = op.shape(op.input(0))
    perm = op.attrs.perm
    if s is None:
        return None, None
    r = len(s)
    if perm is None:
        return s, list(range(r - 1, -1, -1))
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(r)):
        op.fail(f"perm {perm} is not a permutation of [0, {r}) (input rank {r})")
    return s, perm


@shape_rule("Transpose", *TRANSPOSE)
def _transpose_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    s, perm = _perm(op)
    return [tensor(None if s is None else [s[p] for p in perm], et)]


@verifier("Transpose", *TRANSPOSE)
def _transpose_verify(op: OnnxOp):
    _perm(op)
