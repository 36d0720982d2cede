"""ZipMap (ai.onnx.ml v1): [N, C] f32 scores -> a sequence of N maps
{class label: score}, C = number of labels.

It is a presentation op (skl2onnx puts it only on graph outputs): the
compiled library returns the score tensor, the output signature lists the
labels, and the Python runtime builds the dicts (``passes/onnx_to_linalg/
ml_zipmap.py``; runtime/signature.py ``zipmap_rows``).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt

ML = "ai.onnx.ml"


def zipmap_labels(op: OnnxOp) -> tuple[str, list]:
    """("int64" | "string", the labels)."""
    ints, strs = op.attrs.classlabels_int64s, op.attrs.classlabels_strings
    if bool(ints) == bool(strs):
        op.fail("exactly one of classlabels_int64s and classlabels_strings must be given")
    return ("int64", list(ints)) if ints else ("string", list(strs))


@shape_rule("ZipMap", 1, domain=ML)
def _zipmap_shape(op: OnnxOp):
    kind, _ = zipmap_labels(op)
    key = "i64" if kind == "int64" else "!onnx.string"
    return [ir.Type.parse(f"!onnx.seq<!onnx.map<{key}, tensor<f32>>>")]


@verifier("ZipMap", 1, domain=ML)
def _zipmap_verify(op: OnnxOp):
    _, labels = zipmap_labels(op)
    x = op.shape(op.input(0))
    if x is not None and (len(x) != 2 or x[1] not in (None, len(labels))):
        op.fail(f"X has shape {fmt(x)}: expected [N, {len(labels)}] (one score per label)")
