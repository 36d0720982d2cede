"""GridSample and AffineGrid.

* GridSample (v16: 2-D, modes bilinear/nearest/bicubic; v20/v22: N-D,
  linear/nearest/cubic): X [N, C, D1..Dr], grid [N, H1..Hr, r] ->
  [N, C, H1..Hr]. ``grid_sample_dims`` is the dim algebra shared with the
  lowering (passes/onnx_to_linalg/grid_sample.py).
* AffineGrid (v20): theta [N, r, r+1], size (N, C, D1..Dr) ->
  [N, D1..Dr, r]; the dims are ``size``'s values (known at compile time
  only when it is a constant).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt, int_values

MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic",
         "nearest": "nearest"}
PADDING = ("zeros", "border", "reflection")


def grid_sample_mode(op: OnnxOp) -> str:
    """'linear' / 'cubic' / 'nearest' (v16 spells them bilinear/bicubic)."""
    m = op.attrs.mode
    names = ("bilinear", "bicubic", "nearest") if op.version == 16 else \
        ("linear", "cubic", "nearest")
    if m not in names:
        op.fail(f"mode '{m}' is not one of {', '.join(names)}")
    if op.attrs.padding_mode not in PADDING:
        op.fail(f"padding_mode '{op.attrs.padding_mode}' is not one of {', '.join(PADDING)}")
    return MODES[m]


def grid_sample_dims(ctx, x, g):
    """X dims, grid dims (ints/UNKNOWN or run-time) -> output dims."""
    ctx.require(D.eq(x[0], g[0]), "X has batch size {0} but grid has {1}", x[0], g[0])
    r = len(x) - 2
    ctx.require(D.eq(g[-1], r), "grid's last dim is {0}: expected %d (the spatial rank of X)"
                % r, g[-1])
    n = x[0] if D.is_static(x[0]) else g[0]
    return [n, x[1], *g[1:-1]]


def _grid_sample(op: OnnxOp):
    x, g = op.shape(op.input(0)), op.shape(op.input(1))
    grid_sample_mode(op)
    if x is not None and len(x) < 3:
        op.fail(f"X {fmt(x)} must have rank >= 3 (N, C and a spatial dim)")
    if op.version == 16 and x is not None and len(x) != 4:
        op.fail(f"X {fmt(x)} must be 4-D in opset 16")
    if x is None or g is None:
        if g is not None:
            return (g[0], None, *g[1:-1])
        return None if x is None else (x[0], x[1]) + (None,) * (len(x) - 2)
    if len(x) != len(g):
        op.fail(f"grid {fmt(g)} must have the rank of X {fmt(x)}")
    out = grid_sample_dims(D.inference_checks(op), D.from_static(x), D.from_static(g))
    return tuple(D.to_static(out))


@verifier("GridSample", 16, 20, 22)
def _grid_sample_verify(op: OnnxOp):
    _grid_sample(op)


@shape_rule("GridSample", 16, 20, 22)
def _grid_sample_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor(_grid_sample(op), et)]


def affine_grid_rank(op: OnnxOp) -> int | None:
    """r, the spatial rank: from size's length or theta's shape."""
    s, t = op.shape(op.input(1)), op.shape(op.input(0))
    r = None
    if s is not None and len(s) == 1 and s[0] is not None:
        r = s[0] - 2
    if t is not None and len(t) == 3 and t[1] is not None:
        if r is not None and t[1] != r:
            op.fail(f"theta {fmt(t)} does not match size of length {r + 2}")
        r = t[1]
    if r is not None and r not in (2, 3):
        op.fail(f"only 2-D and 3-D grids are defined (size has length {r + 2})")
    return r


@verifier("AffineGrid", 20)
def _affine_grid_verify(op: OnnxOp):
    t = op.shape(op.input(0))
    if t is not None and (len(t) != 3 or (t[1] is not None and t[2] is not None
                                          and t[2] != t[1] + 1)):
        op.fail(f"theta {fmt(t)} must be [N, r, r+1]")
    affine_grid_rank(op)


@shape_rule("AffineGrid", 20)
def _affine_grid_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    size = int_values(op.input(1))
    if size is not None:
        return [tensor((size[0], *size[2:], len(size) - 2), et)]
    r = affine_grid_rank(op)
    if r is None:
        return [tensor(None, et)]
    t = op.shape(op.input(0))
    return [tensor((t[0] if t else None,) + (None,) * r + (r,), et)]
