"""Other NN ops: Dropout (output + optional mask), LRN, Flatten.

* Dropout: output and mask have the data's shape; the mask is T (the data
  type) in v7 and bool since v10. v12+ take ratio / training_mode as
  optional scalar inputs instead of the ratio attribute.
* LRN: output has the input's shape.
* Flatten: [prod(d[:axis]), prod(d[axis:])]; axis in [0, r] for v1/v9,
  [-r, r] since v11.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

DROPOUT_VERSIONS = (7, 10, 12, 13, 22)
LRN_VERSIONS = (1, 13)
FLATTEN_VERSIONS = (1, 9, 11, 13, 21, 23, 24, 25)


# -- Dropout ---------------------------------------------------------------------

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


# -- LRN -----------------------------------------------------------------------------

@verifier("LRN", *LRN_VERSIONS)
def _lrn_verify(op: OnnxOp):
    size = op.attrs.size
    if size is None:
        op.fail("attribute 'size' is required")
    if size < 1:
        op.fail(f"attribute 'size' = {size}: expected >= 1")
    x = op.shape(op.input(0))
    if x is not None and len(x) < 2:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 2 (N x C x D1 x ... x Dn), "
                f"got rank {len(x)}")


@shape_rule("LRN", *LRN_VERSIONS)
def _lrn_shape(op: OnnxOp):
    x = op.input(0)
    return [tensor(op.shape(x), op.elem(x)) if op.elem(x) is not None else None]


# -- Flatten ---------------------------------------------------------------------------

def _flatten(op: OnnxOp):
    x = op.shape(op.input(0))
    axis = op.attrs.axis
    if x is None:
        if op.version < 11 and axis < 0:
            op.fail(f"attribute 'axis' = {axis}: expected >= 0 (negative axes need opset 11)")
        return None
    r = len(x)
    lo = 0 if op.version < 11 else -r
    if not lo <= axis <= r:
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{lo}, {r}] for input of rank {r}")
    if axis < 0:
        axis += r

    def prod(ds):
        return None if any(d is None for d in ds) else math.prod(ds)
    return (prod(x[:axis]), prod(x[axis:]))


@verifier("Flatten", *FLATTEN_VERSIONS)
def _flatten_verify(op: OnnxOp):
    _flatten(op)


@shape_rule("Flatten", *FLATTEN_VERSIONS)
def _flatten_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _flatten(op)
    return [tensor(shape if shape is not None else (None, None), et) if et is not None else None]
