"""Col2Im (v18): input [N, C * prod(block), L], image_shape [r values],
block_shape [r values] -> [N, C, image...]; L must be the number of block
positions, prod over i of (image_i + pads - (dilation_i (block_i - 1) + 1))
// stride_i + 1. ``col2im_dims`` is the dim algebra shared with the lowering
(passes/onnx_to_linalg/col2im.py); image_shape and block_shape may be known
only at run time.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, int_values


def col2im_rank(op: OnnxOp) -> int | None:
    """r, the number of image dims (image_shape's / block_shape's length)."""
    r = None
    for name, v in (("image_shape", op.input(1)), ("block_shape", op.input(2))):
        s = op.shape(v)
        if s is not None and (len(s) != 1):
            op.fail(f"'{name}' has shape {fmt(s)}: expected a 1-D tensor")
        if s is not None and s[0] is not None:
            if r is not None and s[0] != r:
                op.fail(f"image_shape and block_shape have different lengths ({r} and {s[0]})")
            r = s[0]
    if r is not None:
        for name in ("dilations", "strides"):
            a = getattr(op.attrs, name)
            if a and len(a) != r:
                op.fail(f"'{name}' has {len(a)} values: expected {r}")
        if op.attrs.pads and len(op.attrs.pads) != 2 * r:
            op.fail(f"'pads' has {len(op.attrs.pads)} values: expected {2 * r}")
    return r


def col2im_attrs(op: OnnxOp, r: int):
    d = list(op.attrs.dilations or [1] * r)
    s = list(op.attrs.strides or [1] * r)
    p = list(op.attrs.pads or [0] * (2 * r))
    if min(d + s) < 1 or min(p) < 0:
        op.fail("dilations and strides must be >= 1, pads >= 0")
    return d, s, p


def col2im_dims(ctx, x, image, block, dil, strides, pads):
    """x: input dims; image, block: their values (dims) -> (C, blocks per
    image dim, output dims)."""
    r = len(image)
    p = D.product(block)
    ctx.require(D.gt(p, 0), "block_shape's product is {0}: expected > 0", p)
    ctx.require(D.eq(x[1] % p, 0), "input dim 1 ({0}) is not a multiple of the block "
                "size {1}", x[1], p)
    nb = []
    for i in range(r):
        span = dil[i] * (block[i] - 1) + 1
        n = (image[i] + pads[i] + pads[i + r] - span) // strides[i] + 1
        ctx.require(D.ge(n, 1), f"image dim {i} ({{0}}) is smaller than the dilated block "
                    f"({{1}})", image[i], span)
        nb.append(n)
    ctx.require(D.eq(x[2], D.product(nb)), "input dim 2 is {0}: expected {1} block "
                "positions", x[2], D.product(nb))
    c = x[1] // p
    return c, nb, [x[0], c, *image]


@verifier("Col2Im", 18)
def _col2im_verify(op: OnnxOp):
    r = col2im_rank(op)
    x = op.shape(op.input(0))
    if x is not None and len(x) != 3:
        op.fail(f"input has shape {fmt(x)}: expected [N, C * prod(block_shape), L]")
    if r is not None:
        col2im_attrs(op, r)
    _col2im_shape(op)


@shape_rule("Col2Im", 18)
def _col2im_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    r = col2im_rank(op)
    x = op.shape(op.input(0))
    if r is None or x is None:
        return [tensor(None, et)]
    image, block = int_values(op.input(1)), int_values(op.input(2))
    dims = lambda v: [D.UNKNOWN] * r if v is None else D.from_static(v)  # noqa: E731
    d, s, p = col2im_attrs(op, r)
    out = col2im_dims(D.inference_checks(op), D.from_static(x), dims(image), dims(block),
                      d, s, p)[2]
    return [tensor(tuple(D.to_static(out)), et)]
