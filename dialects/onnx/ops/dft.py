"""DFT (v17: axis attribute; v20: axis input, default -2): the signal
[..., n_in, ..., 1 or 2] (real or complex in the last dim) -> the same
dims with the transformed axis resized and a last dim of 2 (1 for the
inverse of a one-sided spectrum, which is real). ``dft_dims`` is the dim
algebra shared with the lowering (passes/onnx_to_linalg/dft.py).

STFT (v17): signal [batch, L, 1 or 2], frame_step, window [n], frame_length
-> [batch, (L - n) // frame_step + 1, n // 2 + 1 (onesided) or n, 2]; n is
frame_length, else the window's length, else L (``stft_dims``).
MelWeightMatrix (v17): [dft_length // 2 + 1, num_mel_bins] of
output_datatype (float by default).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
import onnx

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, fmt, int_values, norm_axis
from onnx_mlir_py.dialects.onnx.ops.conv import opt_attr


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


# -- STFT ---------------------------------------------------------------------------

def stft_dims(ctx, sig_len, step, length, onesided: bool):
    """-> (n, the frame and DFT length; frames; bins) for a signal of
    ``sig_len`` samples, ``step`` and ``length`` (frame_length, or the
    window's length, or None)."""
    n = sig_len if length is None else length
    ctx.require(D.ge(n, 1), "frame_length is {0}: expected >= 1", n)
    ctx.require(D.ge(step, 1), "frame_step is {0}: expected >= 1", step)
    ctx.require(D.le(n, sig_len), "frame_length {0} is longer than the signal ({1} samples)",
                n, sig_len)
    frames = (sig_len - n) // step + 1
    bins = n // 2 + 1 if onesided else n
    return n, frames, bins


def _scalar_const(op: OnnxOp, i: int):
    """Input ``i``'s one value if constant, D.UNKNOWN if not, None if absent."""
    v = op.input(i)
    if v is None:
        return None
    c = const_ints(v)
    if c is not None and len(c) != 1:
        op.fail(f"input #{i} has {len(c)} values: expected a scalar")
    return c[0] if c else D.UNKNOWN


def _stft_args(op: OnnxOp):
    """(signal shape or None, step, length) as dims for stft_dims."""
    s = op.shape(op.input(0))
    step = _scalar_const(op, 1)
    length = _scalar_const(op, 3)
    w = op.shape(op.input(2)) if op.input(2) is not None else None
    if length is None and op.input(2) is not None:
        length = D.from_static([w[0]])[0] if w else D.UNKNOWN
    return s, step, length


@verifier("STFT", 17)
def _stft_verify(op: OnnxOp):
    s, step, length = _stft_args(op)
    if s is not None:
        if len(s) != 3:
            op.fail(f"signal has shape {fmt(s)}: expected [batch, length, 1 or 2]")
        if s[2] is not None and s[2] not in (1, 2):
            op.fail(f"signal has shape {fmt(s)}: the last dim must be 1 (real) or 2 (complex)")
        if s[2] == 2 and op.attrs.onesided:
            op.fail("onesided = 1 needs a real signal (last dim 1); this one is complex")
    if op.input(2) is not None:
        w = op.shape(op.input(2))
        if w is not None and len(w) != 1:
            op.fail(f"window has shape {fmt(w)}: expected rank 1")
        fl = _scalar_const(op, 3)
        if w is not None and len(w) == 1 and w[0] is not None and isinstance(fl, int) \
                and fl != w[0]:
            op.fail(f"window has length {w[0]}: expected frame_length = {fl}")
        if op.elem(op.input(2)) is not None and op.elem(op.input(0)) is not None \
                and op.elem(op.input(2)) != op.elem(op.input(0)):
            op.fail("window and signal have different element types")
    sig_len = D.from_static([s[1]])[0] if s is not None and len(s) == 3 else D.UNKNOWN
    stft_dims(D.inference_checks(op), sig_len, D.UNKNOWN if step is None else step,
              length, bool(op.attrs.onesided))


@shape_rule("STFT", 17)
def _stft_shape(op: OnnxOp):
    s, step, length = _stft_args(op)
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    if s is None or len(s) != 3:
        return [tensor((None,) * 4, et)]
    sig_len = D.from_static([s[1]])[0]
    _, frames, bins = stft_dims(D.inference_checks(op), sig_len, step, length,
                                bool(op.attrs.onesided))
    return [tensor((s[0],) + tuple(D.to_static([frames, bins])) + (2,), et)]


# -- MelWeightMatrix ----------------------------------------------------------------

def mel_dtype(op: OnnxOp) -> int:
    return opt_attr(op, "output_datatype", onnx.TensorProto.FLOAT)


@verifier("MelWeightMatrix", 17)
def _mel_verify(op: OnnxOp):
    names = ("num_mel_bins", "dft_length", "sample_rate")
    for i, name in enumerate(names):
        c = const_ints(op.input(i))
        if c is not None and len(c) != 1:
            op.fail(f"input '{name}' has {len(c)} values: expected a scalar")
        if c is not None and c[0] < 1:
            op.fail(f"input '{name}' is {c[0]}: expected >= 1")


@shape_rule("MelWeightMatrix", 17)
def _mel_shape(op: OnnxOp):
    bins, n = int_values(op.input(0)), int_values(op.input(1))
    et = elem_type(mel_dtype(op))
    rows = n[0] // 2 + 1 if n and n[0] is not None else None
    return [tensor((rows, bins[0] if bins else None), et)]
