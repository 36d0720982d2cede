"""Losses: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.

scores/input [N, C, d1..dk], labels/target [N, d1..dk] (integer), optional
weights [C]. The loss is [N, d1..dk] with reduction 'none', a scalar with
'mean' or 'sum'; SoftmaxCrossEntropyLoss's optional second output
(log_prob) has the scores' shape.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

SCE = (12, 13)
NLL = (12, 13, 22)
REDUCTIONS = ("none", "mean", "sum")


@verifier("SoftmaxCrossEntropyLoss", *SCE)
@verifier("NegativeLogLikelihoodLoss", *NLL)
def _loss(op: OnnxOp):
    x, t, w = (op.shape(op.input(i)) for i in range(3))
    red = op.attrs.reduction
    if red not in REDUCTIONS:
        op.fail(f"attribute 'reduction' = '{red}': expected one of {', '.join(REDUCTIONS)}")
    if x is not None and len(x) < 2:
        op.fail(f"input has shape {fmt(x)}: expected rank >= 2 (N x C x d1 ...)")
    if x is not None and t is not None:
        if len(t) != len(x) - 1:
            op.fail(f"target has shape {fmt(t)} but input has {fmt(x)}: expected target "
                    f"rank {len(x) - 1} (the input without C)")
        for i, (a, b) in enumerate(zip((x[0],) + x[2:], t)):
            if a is not None and b is not None and a != b:
                op.fail(f"target has shape {fmt(t)} but input has {fmt(x)}: "
                        f"dim {i} differs ({b} vs {a})")
    if w is not None:
        if len(w) != 1:
            op.fail(f"weight has shape {fmt(w)}: expected rank 1 (C)")
        if x is not None and None not in (x[1], w[0]) and x[1] != w[0]:
            op.fail(f"weight has {w[0]} elements but input has C = {x[1]}")
    if red != "none":
        return ()
    if t is not None:
        return t
    return None if x is None else (x[0],) + x[2:]


@shape_rule("SoftmaxCrossEntropyLoss", *SCE)
@shape_rule("NegativeLogLikelihoodLoss", *NLL)
def _loss_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None] * len(op.results)
    out = [tensor(_loss(op), et)]
    if len(op.results) > 1:
        out.append(tensor(op.shape(op.input(0)), et))
    return out
