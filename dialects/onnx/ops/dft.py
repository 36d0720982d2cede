"""DFT (v17: axis attribute; v20: axis input, default -2): the signal
[..., n_in, ..., 1 or 2] (real or complex in the last dim) -> the same
dims with the transformed axis resized and a last dim of 2 (1 for the
inverse of a one-sided spectrum, which is real). ``dft_dims`` is the dim
algebra shared with the lowering (passes/onnx_to_linalg/dft.py).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, fmt, norm_axis


def dft_length(ctx, n_in, length, inverse: bool, onesided: bool):
    """-> (n, the transform length; the output's size on the axis)."""
    if length is None:
        n = 2 * (n_in - 1) if (inverse and onesided) else n_in
    else:
        n = length
    ctx.require(D.ge(n, 1), "the DFT length is {0}: expected >= 1", n)
    out = n // 2 + 1 if (onesided and not inverse) else n
    return n, out


def dft_axis(op: OnnxOp, rank: int):
    """The axis as an int if known at compile time, else None."""
    if op.version >= 20:
        if op.input(2) is None:
            a = -2
        else:
            c = const_ints(op.input(2))
            if c is None:
                return None
            a = c[0]
    else:
        a = op.attrs.axis
    a = norm_axis(op, a, rank)
    if a == rank - 1:
        op.fail(f"axis {a} is the complex dim of the signal (rank {rank})")
    return a


def _check(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None:
        if len(x) < 2:
            op.fail(f"input has shape {fmt(x)}: expected rank >= 2 ([..., 1 or 2])")
        if x[-1] is not None and x[-1] not in (1, 2):
            op.fail(f"input has shape {fmt(x)}: the last dim must be 1 (real) or 2 (complex)")
        dft_axis(op, len(x))


@verifier("DFT", 17, 20)
def _dft_verify(op: OnnxOp):
    _check(op)


@shape_rule("DFT", 17, 20)
def _dft_shape(op: OnnxOp):
    x, et = op.shape(op.input(0)), op.elem(op.input(0))
    if et is None:
        return [None]
    if x is None:
        return [tensor(None, et)]
    inverse, onesided = bool(op.attrs.inverse), bool(op.attrs.onesided)
    last = 1 if (inverse and onesided) else 2
    a = dft_axis(op, len(x))
    length = None
    if op.input(1) is not None:
        c = const_ints(op.input(1))
        length = c[0] if c else D.UNKNOWN
    if a is None:
        return [tensor((None,) * (len(x) - 1) + (last,), et)]
    n_in = D.from_static([x[a]])[0]
    _, out = dft_length(D.inference_checks(op), n_in, length, inverse, onesided)
    return [tensor(x[:a] + (D.to_static([out])[0],) + x[a + 1:-1] + (last,), et)]
