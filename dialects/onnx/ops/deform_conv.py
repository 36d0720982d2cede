"""DeformConv (v19, v22): the Conv output shape of X and W (conv.py's
``conv_dims``), with offset [N, offset_group * prod(kernel) * n, O1..On] and
mask [N, offset_group * prod(kernel), O1..On] (n spatial axes) checked
against it (lowering: passes/onnx_to_linalg/deform_conv.py).
"""
from __future__ import annotations

from typing import Sequence

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.dims import Dim
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result
from onnx_mlir_py.dialects.onnx.ops.conv import conv_shape, opt_attr


def deform_dims(ctx: D.ShapeChecks, out: Sequence[Dim], x: Sequence[Dim], kernel: Sequence[Dim],
                offset: Sequence[Dim], mask: Sequence[Dim] | None, offset_group: int) -> None:
    """Checks offset (and mask) against the Conv output dims ``out``, the
    input channels and the kernel sizes (dims.py kinds)."""
    ns = len(kernel)
    ctx.require(D.eq(x[1] % offset_group, 0),
                f"input channels C = {{0}} is not divisible by offset_group {offset_group}", x[1])
    k = 1
    for d in kernel:
        k = k * d
    for name, v, per in (("offset", offset, ns), ("mask", mask, 1)):
        if v is None:
            continue
        ctx.require(D.eq(v[0], out[0]), f"input '{name}' dim 0 is {{0}}: expected the batch "
                    "size {1}", v[0], out[0])
        ctx.require(D.eq(v[1], k * (offset_group * per)),
                    f"input '{name}' dim 1 is {{0}}: expected offset_group * prod(kernel)"
                    f"{' * ' + str(ns) if per > 1 else ''} = {{1}}", v[1], k * (offset_group * per))
        for i in range(ns):
            ctx.require(D.eq(v[2 + i], out[2 + i]), f"input '{name}' dim {2 + i} is {{0}}: "
                        f"expected the output size {{1}}", v[2 + i], out[2 + i])


def _deform_conv(op: OnnxOp):
    out = conv_shape(op, 0, 1, 3)
    og = opt_attr(op, "offset_group", 1)
    if og < 1:
        op.fail(f"attribute 'offset_group' = {og}: expected >= 1")
    x, w = op.shape(op.input(0)), op.shape(op.input(1))
    off = op.shape(op.input(2))
    mask = op.shape(op.input(4)) if op.input(4) is not None else None
    for name, v in (("offset", off), ("mask", mask)):
        if v is not None and out is not None and len(v) != len(out):
            op.fail(f"input '{name}' has shape {fmt(v)}: expected rank {len(out)} "
                    f"[N, channels, output spatial dims]")
    if out is None or x is None or w is None:
        return out
    kernel = opt_attr(op, "kernel_shape") or w[2:]
    deform_dims(D.inference_checks(op), D.from_static(out), D.from_static(x),
                D.from_static(kernel), D.from_static(off) or [D.UNKNOWN] * len(out),
                D.from_static(mask), og)
    return out


shape_rule("DeformConv", 19, 22)(single_result(_deform_conv))
verifier("DeformConv", 19, 22)(_deform_conv)
