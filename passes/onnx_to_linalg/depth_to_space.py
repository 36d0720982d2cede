"""DepthToSpace (DCR / CRD) and SpaceToDepth -> tensor.expand_shape, one
transposing linalg.generic, tensor.collapse_shape (NCHW). Every dim may be
dynamic: the result dims and divisibility checks are the shape rule's
helper (``dialects/onnx/ops/depth_to_space.py::space_depth_dims``) on run-time
dims; each expanded group has one dynamic size at most (the block size is
static)."""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.depth_to_space import space_depth_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.conv import collapse_to
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, fit_result, index_of
from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand


def _setup(op: OnnxOp, b: LoweringContext):
    """(x, blocksize, input dims, result dims, mode); dims as int | index Value."""
    x = op.input(0)
    if b.ranked(op, x).rank != 4:
        op.fail("input must be 4-D (NCHW)")
    bs = op.attrs.blocksize
    if bs <= 0:
        op.fail(f"blocksize must be positive, got {bs}")
    xd = b.ixdims(x)
    out = fit_result(op, b, space_depth_dims(checks(op, b), op.op_type, xd, bs))
    mode = op.attrs.mode if "mode" in op.spec.attributes else "DCR"
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("DCR", "CRD"):
        op.fail(f"unknown mode {mode!r}")
    return x, bs, xd, out, mode


def _permute(b: LoweringContext, x: ir.Value, out_dims: list, in_exprs: list[int]) -> ir.Value:
    """out[d0..d5] = x[in_exprs]."""
    n = len(out_dims)
    return b.generic([x], [b.empty(out_dims, x.type.element_type)],
                     [affine_map(n, in_exprs), affine_map(n, list(range(n)))],
                     ["parallel"] * n, lambda v, _o: v)[0]


@lowering("DepthToSpace", 1, 11, 13, 28)
def lower_depth_to_space(op: OnnxOp, b: LoweringContext):
    x, bs, xd, out, mode = _setup(op, b)
    n, h, w = (index_of(d) for d in (xd[0], xd[2], xd[3]))
    cc = index_of(out[1])
    grp = [[0], [1, 2, 3], [4], [5]]
    # result iteration (n, c', h, i, w, j)
    if mode == "DCR":  # channel = (i * bs + j) * C' + c'
        x6 = expand(b, x, grp, [n, bs, bs, cc, h, w])
        y6 = _permute(b, x6, [n, cc, h, bs, w, bs], [0, 3, 5, 1, 2, 4])
    else:  # CRD: channel = c' * bs * bs + i * bs + j
        x6 = expand(b, x, grp, [n, cc, bs, bs, h, w])
        y6 = _permute(b, x6, [n, cc, h, bs, w, bs], [0, 1, 3, 5, 2, 4])
    return [collapse_to(b, y6, [[0], [1], [2, 3], [4, 5]], [index_of(d) for d in out])]


@lowering("SpaceToDepth", 1, 13, 28)
def lower_space_to_depth(op: OnnxOp, b: LoweringContext):
    x, bs, xd, out, mode = _setup(op, b)
    n, c = index_of(xd[0]), index_of(xd[1])
    ho, wo = index_of(out[2]), index_of(out[3])
    x6 = expand(b, x, [[0], [1], [2, 3], [4, 5]], [n, c, ho, bs, wo, bs])
    if mode == "DCR":  # result iteration (n, i, j, c, h', w'); channel = (i * bs + j) * C + c
        y6 = _permute(b, x6, [n, bs, bs, c, ho, wo], [0, 3, 4, 1, 5, 2])
    else:  # CRD: (n, c, i, j, h', w'); channel = c * bs * bs + i * bs + j
        y6 = _permute(b, x6, [n, c, bs, bs, ho, wo], [0, 1, 4, 2, 5, 3])
    return [collapse_to(b, y6, [[0], [1, 2, 3], [4], [5]], [index_of(d) for d in out])]
