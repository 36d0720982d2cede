"""Convolutions: Conv, ConvTranspose, and the window geometry shared with
the pooling ops (pool.py): kernel/stride/dilation/pads attributes, auto_pad
(NOTSET, SAME_UPPER, SAME_LOWER, VALID) and ceil_mode.

Output sizes follow the ONNX spec and ``onnx.shape_inference``:

    out = floor((in + pad_begin + pad_end - ((k - 1) * d + 1)) / s) + 1

(ceil instead of floor with ceil_mode). With auto_pad SAME_* the total
padding is ``max(k_eff - (s if in % s == 0 else in % s), 0)``, which makes
``out = ceil(in / s)``; VALID means zero padding. Dynamic dims stay None.

Conv and ConvTranspose have one semantics across versions 1, 11 and 22 (the
later versions only widen the type constraints).
"""
from __future__ import annotations

from dataclasses import dataclass

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def fmt(shape) -> str:
    if shape is None:
        return "<unranked>"
    return "[" + "x".join("?" if d is None else str(d) for d in shape) + "]"


def opt_attr(op: OnnxOp, name: str, default=None):
    """Attribute value, or ``default`` when this op version lacks it or it is unset."""
    if name not in op.spec.attributes:
        return default
    v = getattr(op.attrs, name)
    return default if v is None else v


@dataclass
class Window:
    kernel: list[int | None]     # None: taken from a dynamic weight dim
    strides: list[int]
    dilations: list[int]
    pads: list[int] | None       # explicit pads attribute (2n) or None
    auto_pad: str
    ceil_mode: int

    def eff_kernel(self, i: int) -> int | None:
        k = self.kernel[i]
        return None if k is None else (k - 1) * self.dilations[i] + 1

    def pads_for(self, i: int, in_dim: int | None) -> tuple[int, int] | None:
        """(begin, end) padding of spatial axis i, None if it needs an unknown size."""
        n = len(self.kernel)
        if self.pads is not None:
            return self.pads[i], self.pads[i + n]
        if self.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            ke, s = self.eff_kernel(i), self.strides[i]
            if ke is None or (in_dim is None and s > 1):
                return None
            residual = in_dim % s if s > 1 else 0
            total = max(ke - (s if residual == 0 else residual), 0)
            small, big = total // 2, total - total // 2
            return (small, big) if self.auto_pad == "SAME_UPPER" else (big, small)
        return 0, 0

    def out_dim(self, op: OnnxOp, i: int, in_dim: int | None, drop_padded_window: bool):
        """Output size of spatial axis i (None if dynamic); fails if < 1."""
        ke = self.eff_kernel(i)
        pads = self.pads_for(i, in_dim)
        if in_dim is None or ke is None or pads is None:
            return None
        s = self.strides[i]
        gap = in_dim + pads[0] + pads[1] - ke
        if gap < 0:
            op.fail(f"spatial axis {i}: padded input size {in_dim + pads[0] + pads[1]} "
                    f"is smaller than the effective kernel size {ke}; expected "
                    f"input + pads >= (kernel - 1) * dilation + 1")
        if self.ceil_mode:
            out = -(-gap // s) + 1
            # Spec since MaxPool/AveragePool/LpPool v22 (PyTorch semantics):
            # "Sliding windows that would start in the right padded region
            # are ignored."
            if drop_padded_window and (out - 1) * s >= in_dim + pads[0]:
                out -= 1
        else:
            out = gap // s + 1
        return out


def _check_ints(op: OnnxOp, name: str, vals, n: int, minimum: int):
    if vals is None:
        return
    if len(vals) != n:
        op.fail(f"attribute '{name}' has {len(vals)} values, expected {n} "
                f"(one per spatial axis)")
    bad = [v for v in vals if v < minimum]
    if bad:
        op.fail(f"attribute '{name}' = {list(vals)}: expected values >= {minimum}, got {bad[0]}")


def window(op: OnnxOp, n: int, weight_spatial=None, *, require_kernel: bool) -> Window:
    """Read and check the window attributes for ``n`` spatial axes.

    ``weight_spatial``: the weight's spatial dims (conv), used when
    kernel_shape is absent and checked against it when present."""
    kernel = opt_attr(op, "kernel_shape")
    strides = opt_attr(op, "strides")
    dilations = opt_attr(op, "dilations")
    pads = opt_attr(op, "pads")
    auto_pad = opt_attr(op, "auto_pad", "NOTSET")
    ceil_mode = opt_attr(op, "ceil_mode", 0)
    if auto_pad not in AUTO_PADS:
        op.fail(f"attribute 'auto_pad' = '{auto_pad}': expected one of {', '.join(AUTO_PADS)}")
    if ceil_mode not in (0, 1):
        op.fail(f"attribute 'ceil_mode' = {ceil_mode}: expected 0 or 1")
    if kernel is None:
        if require_kernel:
            op.fail("attribute 'kernel_shape' is required")
        kernel = list(weight_spatial) if weight_spatial is not None else [None] * n
    _check_ints(op, "kernel_shape", kernel if None not in kernel else None, n, 1)
    if weight_spatial is not None and len(weight_spatial) == n:
        for i, (k, w) in enumerate(zip(kernel, weight_spatial)):
            if k is not None and w is not None and k != w:
                op.fail(f"attribute 'kernel_shape' = {list(kernel)} does not match the weight's "
                        f"spatial dims {fmt(weight_spatial)}: expected {w} at axis {i}, got {k}")
    _check_ints(op, "strides", strides, n, 1)
    _check_ints(op, "dilations", dilations, n, 1)
    if pads is not None:
        if len(pads) != 2 * n:
            op.fail(f"attribute 'pads' has {len(pads)} values, expected {2 * n} "
                    f"(begin and end for each of {n} spatial axes)")
        bad = [p for p in pads if p < 0]
        if bad:
            op.fail(f"attribute 'pads' = {list(pads)}: expected values >= 0, got {bad[0]}")
        if auto_pad != "NOTSET":
            op.fail(f"attribute 'pads' = {list(pads)} cannot be used with auto_pad = "
                    f"'{auto_pad}' (expected auto_pad = 'NOTSET')")
    return Window(list(kernel), list(strides or [1] * n), list(dilations or [1] * n),
                  None if pads is None else list(pads), auto_pad, ceil_mode)


def check_input_rank(op: OnnxOp, x_shape, what="input 'X'", minimum=3):
    if x_shape is not None and len(x_shape) < minimum:
        op.fail(f"{what} has shape {fmt(x_shape)}: expected rank >= {minimum} "
                f"(N x C x D1 x ... x Dn), got rank {len(x_shape)}")


def _divides(op, what, value, group):
    if value is not None and value % group != 0:
        op.fail(f"{what} {value} is not divisible by group {group}")


def _check_bias(op: OnnxOp, m):
    b = op.shape(op.input(2))
    if b is None:
        return
    if len(b) != 1:
        op.fail(f"bias 'B' has shape {fmt(b)}: expected rank 1, got rank {len(b)}")
    if m is not None and b[0] is not None and b[0] != m:
        op.fail(f"bias 'B' has shape {fmt(b)}: expected {m} elements (output channels), got {b[0]}")


# -- Conv ----------------------------------------------------------------------

def _conv(op: OnnxOp):
    """Checks the node; returns the output shape (or None if rank unknown)."""
    x, w = op.shape(op.input(0)), op.shape(op.input(1))
    check_input_rank(op, x)
    if w is not None and len(w) < 3:
        op.fail(f"weight 'W' has shape {fmt(w)}: expected rank >= 3 "
                f"(M x C/group x k1 x ... x kn), got rank {len(w)}")
    if x is not None and w is not None and len(x) != len(w):
        op.fail(f"weight 'W' has rank {len(w)} {fmt(w)} but input 'X' has rank {len(x)} "
                f"{fmt(x)}: expected equal ranks")
    rank = len(x) if x is not None else (len(w) if w is not None else None)
    if rank is None:
        kernel = opt_attr(op, "kernel_shape")
        if kernel is None:
            return None
        rank = len(kernel) + 2
    n = rank - 2
    win = window(op, n, w[2:] if w is not None else None, require_kernel=False)
    group = op.attrs.group
    if group < 1:
        op.fail(f"attribute 'group' = {group}: expected >= 1")
    c = x[1] if x is not None else None
    m = w[0] if w is not None else None
    _divides(op, "input channels C =", c, group)
    _divides(op, "output channels M = W dim 0 =", m, group)
    if w is not None and c is not None and w[1] is not None and w[1] * group != c:
        op.fail(f"weight 'W' has shape {fmt(w)}: expected dim 1 = C/group = {c}/{group} = "
                f"{c // group}, got {w[1]}")
    _check_bias(op, m)
    spatial = [win.out_dim(op, i, x[2 + i] if x is not None else None, False)
               for i in range(n)]
    return (x[0] if x is not None else None, m, *spatial)


@verifier("Conv", 1, 11, 22)
def _conv_verify(op: OnnxOp):
    _conv(op)


@shape_rule("Conv", 1, 11, 22)
def _conv_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    return [tensor(_conv(op), et)]


# -- ConvTranspose ---------------------------------------------------------------

def _conv_transpose(op: OnnxOp):
    x, w = op.shape(op.input(0)), op.shape(op.input(1))
    check_input_rank(op, x)
    if w is not None and len(w) < 3:
        op.fail(f"weight 'W' has shape {fmt(w)}: expected rank >= 3 "
                f"(C x M/group x k1 x ... x kn), got rank {len(w)}")
    if x is not None and w is not None and len(x) != len(w):
        op.fail(f"weight 'W' has rank {len(w)} {fmt(w)} but input 'X' has rank {len(x)} "
                f"{fmt(x)}: expected equal ranks")
    rank = len(x) if x is not None else (len(w) if w is not None else None)
    if rank is None:
        return None
    n = rank - 2
    win = window(op, n, w[2:] if w is not None else None, require_kernel=False)
    group = op.attrs.group
    if group < 1:
        op.fail(f"attribute 'group' = {group}: expected >= 1")
    c = x[1] if x is not None else None
    _divides(op, "input channels C =", c, group)
    if w is not None and c is not None and w[0] is not None and w[0] != c:
        op.fail(f"weight 'W' has shape {fmt(w)}: expected dim 0 = input channels {c}, got {w[0]}")
    m = w[1] * group if w is not None and w[1] is not None else None
    _check_bias(op, m)
    out_pad = opt_attr(op, "output_padding")
    _check_ints(op, "output_padding", out_pad, n, 0)
    out_pad = out_pad or [0] * n
    out_shape = opt_attr(op, "output_shape")
    _check_ints(op, "output_shape", out_shape, n, 0)
    spatial: list[int | None] = []
    for i in range(n):
        d = x[2 + i] if x is not None else None
        if out_shape is not None:
            spatial.append(out_shape[i])
            continue
        ke = win.eff_kernel(i)
        if d is None or ke is None:
            spatial.append(None)
            continue
        if win.pads is not None:
            pb, pe = win.pads[i], win.pads[i + n]
        elif win.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            total = max(ke - win.strides[i], 0)
            pb = pe = total // 2  # only the sum matters for the size
            pe = total - pb
        else:
            pb = pe = 0
        out = win.strides[i] * (d - 1) + out_pad[i] + ke - pb - pe
        if out < 1:
            op.fail(f"spatial axis {i}: output size {out} = stride * (in - 1) + output_padding "
                    f"+ effective kernel - pads: expected >= 1")
        spatial.append(out)
    return (x[0] if x is not None else None, m, *spatial)


@verifier("ConvTranspose", 1, 11, 22)
def _conv_transpose_verify(op: OnnxOp):
    _conv_transpose(op)


@shape_rule("ConvTranspose", 1, 11, 22)
def _conv_transpose_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    return [tensor(_conv_transpose(op), et)]
