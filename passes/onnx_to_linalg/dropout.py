"""Dropout. Inference (no training_mode, or a constant false): the output is
the input, the mask (if used) all true (v10+: bool; v7: a tensor of ones of
the input type).

Training (v12+, training_mode true or known only at run time): one
linalg.generic drawing u in [0, 1) per element from random.py's
counter-based generator (keyed by ``seed``, else the node's name) keeps an
element where u >= ratio: y = x / (1 - ratio) there, else 0, and the mask
says which were kept; a run-time training_mode false gives the inference
result. ratio (default 0.5) may be known only at run time (checked in
[0, 1) then). ratio 0 keeps every element: y = x, the mask all true,
whatever the draws (test_training_dropout_zero_ratio*); other ratios give
other draws than numpy's, as onnxruntime's do.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.random import _key, _linear_index, uniform
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np

F = arith.CmpFPredicate


@lowering("Dropout", 7, 10, 12, 13, 22)
def lower_dropout(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    if op.version >= 12 and op.input(2) is not None:
        t = const_np(op.input(2))
        if t is None or bool(t.reshape(-1)[0]):
            return _training(op, b, x, None if t is not None else op.input(2))
    outs = [x]
    if len(op.op.results) > 1:
        mt = b.result_type(op, 1)
        outs.append(b.full(b.dims(x), mt.element_type, 1.0 if op.version < 10 else 1))
    return outs


def _scalar(v: ir.Value) -> ir.Value:
    """The element of a scalar (or one-element 1-D) tensor."""
    return tensor.extract(v, [arith.constant(ir.IndexType.get(), 0)] * v.type.rank)


def _training(op: OnnxOp, b: LoweringContext, x: ir.Value, train: ir.Value | None):
    """train: the run-time training_mode (tensor<i1>), None when it is true."""
    et = x.type.element_type
    if not is_float(et):
        op.fail(f"training Dropout needs a float input (got {et})")
    f64 = ir.F64Type.get()
    if op.input(1) is None:
        ratio = b.const(0.5, f64)
    else:
        ratio = convert_scalar(_scalar(op.input(1)), False, f64)
        if const_np(op.input(1)) is None:
            ok = arith.andi(arith.cmpf(F.OGE, ratio, b.const(0.0, f64)),
                            arith.cmpf(F.OLT, ratio, b.const(1.0, f64)))
            b.require(ok, f"node '{op.name}' ({op.op_type}): ratio must be in [0, 1)")
    on = None if train is None else _scalar(train)
    scale = convert_scalar(arith.divf(b.const(1.0, f64), arith.subf(b.const(1.0, f64), ratio)),
                           False, et)
    key = _key(op)
    dims = b.dims(x)
    r = len(dims)
    i1 = ir.IntegerType.get_signless(1)
    with_mask = len(op.op.results) > 1
    full = affine_map(r, list(range(r)))

    def body(v, *_o):
        keep = arith.cmpf(F.OGE, uniform(key, _linear_index(b, dims)), ratio)
        y = arith.select(keep, arith.mulf(v, scale), b.const(0.0, et))
        if on is not None:      # training_mode false at run time: inference
            y = arith.select(on, y, v)
            keep = arith.ori(keep, arith.xori(on, b.const(1, i1)))
        return [y, keep] if with_mask else y
    outs = [b.empty(dims, et)] + ([b.empty(dims, i1)] if with_mask else [])
    return list(b.generic([x], outs, [full] * (1 + len(outs)), ["parallel"] * r, body))
