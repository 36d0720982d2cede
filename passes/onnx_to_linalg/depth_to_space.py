"""DepthToSpace (DCR / CRD) and SpaceToDepth -> tensor.expand_shape, one
transposing linalg.generic, tensor.collapse_shape (NCHW, static C)."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from ...dialects.onnx import dims as D
from .builder import LoweringContext, affine_map
from .dims_ir import checks
from .reshape import collapse, expand


def _setup(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 4:
        op.fail("input must be 4-D (NCHW)")
    bs = op.attrs.blocksize
    c = op.shape(x)[1]
    if bs <= 0:
        op.fail(f"blocksize must be positive, got {bs}")
    if c is None:
        op.fail("the channel dim must be static")
    return x, bs, c, b.dims(x)


def _permute(b: LoweringContext, x: ir.Value, out_dims: list, in_exprs: list[int]) -> ir.Value:
    """out[d0..d5] = x[in_exprs]."""
    n = len(out_dims)
    return b.generic([x], [b.empty(out_dims, x.type.element_type)],
                     [affine_map(n, in_exprs), affine_map(n, list(range(n)))],
                     ["parallel"] * n, lambda v, _o: v)[0]


def _div(b: LoweringContext, d, k: int):
    return d // k if isinstance(d, int) else arith.divui(d, b.index(k))


@lowering("DepthToSpace", 1, 11, 13, 28)
def lower_depth_to_space(op: OnnxOp, b: LoweringContext):
    x, bs, c, (n, _, h, w) = _setup(op, b)
    if c % (bs * bs):
        op.fail(f"channels {c} are not divisible by blocksize^2 ({bs * bs})")
    cc = c // (bs * bs)
    mode = op.attrs.mode if "mode" in op.spec.attributes else "DCR"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    grp = [[0], [1, 2, 3], [4], [5]]
    # result iteration (n, c', h, i, w, j)
    if mode == "DCR":  # channel = (i * bs + j) * C' + c'
        x6 = expand(b, x, grp, [n, bs, bs, cc, h, w])
        y6 = _permute(b, x6, [n, cc, h, bs, w, bs], [0, 3, 5, 1, 2, 4])
    elif mode == "CRD":  # channel = c' * bs * bs + i * bs + j
        x6 = expand(b, x, grp, [n, cc, bs, bs, h, w])
        y6 = _permute(b, x6, [n, cc, h, bs, w, bs], [0, 1, 3, 5, 2, 4])
    else:
        op.fail(f"unknown mode {mode!r}")
    return [collapse(y6, [[0], [1], [2, 3], [4, 5]], b.result_type(op))]


@lowering("SpaceToDepth", 1, 13, 28)
def lower_space_to_depth(op: OnnxOp, b: LoweringContext):
    x, bs, c, (n, _, h, w) = _setup(op, b)
    for k in (2, 3):
        s = op.shape(x)[k]
        if s is not None and s % bs:
            op.fail(f"spatial dim {s} is not divisible by blocksize {bs}")
        if s is None:                   # split into (dim / bs, bs) below
            d = b.ixdim(x, k)
            checks(op, b).require(D.eq(d % bs, 0), f"dim {k} is {{0}}, not divisible by "
                                  f"blocksize {bs}", d)
    ho, wo = _div(b, h, bs), _div(b, w, bs)
    x6 = expand(b, x, [[0], [1], [2, 3], [4, 5]], [n, c, ho, bs, wo, bs])
    mode = op.attrs.mode if "mode" in op.spec.attributes else "DCR"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode == "DCR":  # result iteration (n, i, j, c, h', w'); channel = (i * bs + j) * C + c
        y6 = _permute(b, x6, [n, bs, bs, c, ho, wo], [0, 3, 4, 1, 5, 2])
    elif mode == "CRD":  # (n, c, i, j, h', w'); channel = c * bs * bs + i * bs + j
        y6 = _permute(b, x6, [n, c, bs, bs, ho, wo], [0, 1, 4, 2, 5, 3])
    else:
        op.fail(f"unknown mode {mode!r}")
    return [collapse(y6, [[0], [1, 2, 3], [4], [5]], b.result_type(op))]
