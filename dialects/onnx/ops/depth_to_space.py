"""DepthToSpace / SpaceToDepth: (N, C, H, W) with C / H / W rearranged by
``blocksize`` (C divisible by blocksize^2, resp. H and W by blocksize)."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt


def space_depth_dims(ctx: D.ShapeChecks, op_type: str, dims, bs: int) -> list:
    """DepthToSpace / SpaceToDepth result dims of (N, C, H, W) ``dims``
    (dims.py kinds), with the divisibility checks: the one computation for
    the shape rule and the lowering."""
    n, c, h, w = dims
    if op_type == "DepthToSpace":
        ctx.require(D.eq(c % (bs * bs), 0), f"channel dim {{0}} is not divisible by {bs * bs}", c)
        return [n, c // (bs * bs), h * bs, w * bs]
    ctx.require(D.eq(h % bs, 0), f"height {{0}} is not divisible by {bs}", h)
    ctx.require(D.eq(w % bs, 0), f"width {{0}} is not divisible by {bs}", w)
    return [n, c * (bs * bs), h // bs, w // bs]


def _d2s(op: OnnxOp):
    s = op.shape(op.input(0))
    b = op.attrs.blocksize
    if b is None or b <= 0:
        op.fail(f"blocksize must be positive, got {b}")
    if s is None:
        return None
    if len(s) != 4:
        op.fail(f"input must be 4-D (N, C, H, W), got {fmt(s)}")
    return D.to_static(space_depth_dims(D.inference_checks(op), op.op_type, D.from_static(s), b))


for _t, _vs in (("DepthToSpace", (1, 11, 13, 28)), ("SpaceToDepth", (1, 13, 28))):
    shape_rule(_t, *_vs)(lambda op: [None if op.elem(op.input(0)) is None
                                     else tensor(_d2s(op), op.elem(op.input(0)))])
    verifier(_t, *_vs)(_d2s)
