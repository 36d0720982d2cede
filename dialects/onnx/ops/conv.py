"""Convolutions: Conv, ConvTranspose, com.microsoft.NhwcConv (Conv on
channels-last X and Y), and the window geometry shared with the pooling
ops (pool.py): kernel/stride/dilation/pads attributes, auto_pad
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
from typing import Sequence

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.dims import Dim
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


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


@dataclass
class Axis:
    """Geometry of one spatial axis (each a dim of ``dims.py``: int, UNKNOWN
    at inference, or a run-time value at lowering)."""
    pad_begin: Dim
    pad_end: Dim
    out: Dim
    extra: Dim      # end padding past pad_end that ceil_mode's last window reads
    kernel: Dim     # effective kernel size (k - 1) * d + 1


def window_axes(win: Window, ctx: D.ShapeChecks, in_dims: Sequence[Dim],
                kernel: Sequence[Dim] | None = None, *,
                drop_padded_window: bool = False) -> list[Axis]:
    """The window arithmetic of Conv and the pools, once, for shape inference
    (``in_dims`` ints / UNKNOWN) and lowering (run-time dims).

    ``kernel``: the kernel sizes (default: ``win.kernel``, None = UNKNOWN).
    ``drop_padded_window`` (pools since v22, PyTorch semantics): with ceil_mode
    a last window that would start in the right padding is dropped."""
    axes = []
    for i, size in enumerate(in_dims):
        k = kernel[i] if kernel is not None else win.kernel[i]
        k = D.UNKNOWN if k is None else k
        s, dil = win.strides[i], win.dilations[i]
        ke = (k - 1) * dil + 1
        if win.pads is not None:
            pb, pe = win.pads[i], win.pads[i + len(in_dims)]
        elif win.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            # out = ceil(in / s); total = max((out - 1) * s + ke - in, 0)
            total = ke - 1 if s == 1 else D.dmax((D.ceil_div(size, s) - 1) * s + ke - size, 0)
            small = total // 2
            big = total - small
            pb, pe = (small, big) if win.auto_pad == "SAME_UPPER" else (big, small)
        else:
            pb = pe = 0
        padded = size + pb + pe
        if win.ceil_mode:
            # ONNX's ceil((padded - ke) / s) + 1 is 1 while padded > ke - s: one window
            # larger than the input (transformers' EfficientNet pooler), as onnxruntime runs
            ctx.require(D.gt(padded + s, ke),
                        f"spatial axis {i}: padded input size {{0}} is smaller than the "
                        f"effective kernel size {{1}} by the stride {s} or more; expected "
                        f"input + pads + stride > (kernel - 1) * dilation + 1 (ceil_mode)",
                        padded, ke)
        else:
            ctx.require(D.ge(padded, ke),
                        f"spatial axis {i}: padded input size {{0}} is smaller than the "
                        f"effective kernel size {{1}}; expected input + pads >= "
                        f"(kernel - 1) * dilation + 1", padded, ke)
        gap = padded - ke
        if win.ceil_mode:
            out = D.ceil_div(gap, s) + 1
            if drop_padded_window:
                out = D.select(D.ge((out - 1) * s, size + pb), out - 1, out)
            extra = D.dmax((out - 1) * s + ke - padded, 0)
        else:
            out = gap // s + 1
            extra = 0
        axes.append(Axis(pb, pe, out, extra, ke))
    return axes


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


def _check_bias_rank(op: OnnxOp, i: int = 2):
    b = op.shape(op.input(i))
    if b is not None and len(b) != 1:
        op.fail(f"bias 'B' has shape {fmt(b)}: expected rank 1, got rank {len(b)}")
    return D.from_static(b) if b is not None or op.input(i) is None else [D.UNKNOWN]


def _kernel(ctx: D.ShapeChecks, w: Sequence[Dim], kernel_attr) -> list[Dim]:
    """Kernel sizes: the weight's spatial dims, which must match kernel_shape if given."""
    if not kernel_attr:
        return list(w[2:])
    for i, k in enumerate(kernel_attr):
        ctx.require(D.eq(w[2 + i], k), f"weight 'W' dim {2 + i} is {{0}}: expected "
                    f"kernel_shape[{i}] = {k}", w[2 + i])
    return list(kernel_attr)


def conv_dims(ctx: D.ShapeChecks, win: Window, x: Sequence[Dim], w: Sequence[Dim],
              bias: Sequence[Dim] | None, group: int, kernel_attr=None):
    """Conv output dims [N, M, spatial...] and the window axes, with the
    channel/group/bias checks. x, w: dims of equal rank (dims.py kinds)."""
    c, m = x[1], w[0]
    ctx.require(D.eq(c % group, 0), f"input channels C = {{0}} is not divisible by group {group}",
                c)
    ctx.require(D.eq(m % group, 0),
                f"output channels M = W dim 0 = {{0}} is not divisible by group {group}", m)
    ctx.require(D.eq(w[1] * group, c), f"weight 'W' dim 1: expected dim 1 = C/group = "
                f"{{1}}/{group} = {{2}}, got {{0}}", w[1], c, c // group)
    if bias is not None:
        ctx.require(D.eq(bias[0], m), "bias 'B' has shape [{0}]: expected {1} elements "
                    "(output channels), got {0}", bias[0], m)
    axes = window_axes(win, ctx, x[2:], _kernel(ctx, w, kernel_attr))
    return [x[0], m] + [a.out for a in axes], axes


def conv_transpose_dims(ctx: D.ShapeChecks, win: Window, x: Sequence[Dim], w: Sequence[Dim],
                        bias: Sequence[Dim] | None, group: int, kernel_attr,
                        out_pad: Sequence[int], out_shape: Sequence[int] | None):
    """ConvTranspose output dims [N, M, spatial...] and per axis (pad_begin,
    pad_end, effective kernel). Spatial size: s * (in - 1) + output_padding +
    ke - pads; auto_pad SAME gives in * s (total pad max(.., 0)), and with
    output_shape the pads follow from it (SAME_UPPER: the smaller half first)."""
    c = x[1]
    ctx.require(D.eq(c % group, 0), f"input channels C = {{0}} is not divisible by group {group}",
                c)
    ctx.require(D.eq(w[0], c), "weight 'W' dim 0: expected dim 0 = input channels {1}, got {0}",
                w[0], c)
    m = w[1] * group
    if bias is not None:
        ctx.require(D.eq(bias[0], m), "bias 'B' has shape [{0}]: expected {1} elements "
                    "(output channels), got {0}", bias[0], m)
    kernel = _kernel(ctx, w, kernel_attr)
    n = len(kernel)
    outs, pads = [], []
    for i in range(n):
        s, ke = win.strides[i], (kernel[i] - 1) * win.dilations[i] + 1
        natural = s * (x[2 + i] - 1) + out_pad[i] + ke
        if out_shape is not None or win.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            if out_shape is not None:
                total = natural - out_shape[i]
            else:
                total = D.dmax(natural - x[2 + i] * s, 0)
            small = total // 2
            big = total - small
            pb, pe = (small, big) if win.auto_pad == "SAME_UPPER" else (big, small)
        elif win.pads is not None:
            pb, pe = win.pads[i], win.pads[i + n]
        else:
            pb = pe = 0
        out = natural - pb - pe if out_shape is None else out_shape[i]
        ctx.require(D.ge(out, 1), f"spatial axis {i}: output size {{0}} = stride * (in - 1) + "
                    "output_padding + effective kernel - pads: expected >= 1", out)
        outs.append(out)
        pads.append((pb, pe, ke))
    return [x[0], m] + outs, pads


# -- Conv ----------------------------------------------------------------------

def _ranked(op: OnnxOp, what_w: str = "weight 'W'", x_i: int = 0, w_i: int = 1):
    """(x, w) shapes, checked to have one rank >= 3; (None, None, rank) if unknown."""
    x, w = op.shape(op.input(x_i)), op.shape(op.input(w_i))
    check_input_rank(op, x)
    if w is not None and len(w) < 3:
        op.fail(f"{what_w} has shape {fmt(w)}: expected rank >= 3, got rank {len(w)}")
    if x is not None and w is not None and len(x) != len(w):
        op.fail(f"{what_w} has rank {len(w)} {fmt(w)} but input 'X' has rank {len(x)} "
                f"{fmt(x)}: expected equal ranks")
    return x, w


def conv_shape(op: OnnxOp, x_i: int = 0, w_i: int = 1, b_i: int | None = 2):
    """Checks the node; returns the output shape (or None if rank unknown)."""
    x, w = _ranked(op, x_i=x_i, w_i=w_i)
    return _conv_out(op, x, w, b_i)


def _conv_out(op: OnnxOp, x, w, b_i: int | None):
    rank = len(x) if x is not None else (len(w) if w is not None else None)
    if rank is None:
        kernel = opt_attr(op, "kernel_shape")
        if kernel is None:
            return None
        rank = len(kernel) + 2
    win = window(op, rank - 2, w[2:] if w is not None else None, require_kernel=False)
    group = opt_attr(op, "group", 1)
    if group < 1:
        op.fail(f"attribute 'group' = {group}: expected >= 1")
    unknown = [D.UNKNOWN] * rank
    bias = _check_bias_rank(op, b_i) if b_i is not None else None
    out, _ = conv_dims(D.inference_checks(op), win, D.from_static(x) or unknown,
                       D.from_static(w) or unknown, bias, group, opt_attr(op, "kernel_shape"))
    return tuple(D.to_static(out))


verifier("Conv", 1, 11, 22)(conv_shape)
shape_rule("Conv", 1, 11, 22)(single_result(conv_shape))


# -- com.microsoft.NhwcConv ------------------------------------------------------------

def to_channels_first(rank: int) -> list[int]:
    """The permutation (N, D1..Dn, C) -> (N, C, D1..Dn)."""
    return [0, rank - 1] + list(range(1, rank - 1))


def to_channels_last(rank: int) -> list[int]:
    """The permutation (N, C, D1..Dn) -> (N, D1..Dn, C)."""
    return [0] + list(range(2, rank)) + [1]


def nhwc_conv_shape(op: OnnxOp):
    """onnxruntime's NhwcConv (its NhwcInferenceContext): Conv of the
    channels-last X (N, D1..Dn, C), W in Conv's layout (M, C/group, k1..kn),
    B (M); Y is channels-last (N, O1..On, M). Checks the node; returns Y's
    shape (or None if the rank is unknown)."""
    x = op.shape(op.input(0))
    if x is not None and len(x) < 3:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 3 (N x D1 x ... x Dn x C), "
                f"got rank {len(x)}")
    if x is not None:
        x = tuple(x[p] for p in to_channels_first(len(x)))
    w = op.shape(op.input(1))
    if w is not None and len(w) < 3:
        op.fail(f"weight 'W' has shape {fmt(w)}: expected rank >= 3, got rank {len(w)}")
    if x is not None and w is not None and len(x) != len(w):
        op.fail(f"weight 'W' has rank {len(w)} {fmt(w)} but input 'X' has rank {len(x)}: "
                f"expected equal ranks")
    y = _conv_out(op, x, w, 2)
    return None if y is None else tuple(y[p] for p in to_channels_last(len(y)))


verifier("NhwcConv", 1, domain="com.microsoft")(nhwc_conv_shape)
shape_rule("NhwcConv", 1, domain="com.microsoft")(single_result(nhwc_conv_shape))


# -- ConvTranspose ---------------------------------------------------------------

def _conv_transpose(op: OnnxOp):
    x, w = _ranked(op)
    rank = len(x) if x is not None else (len(w) if w is not None else None)
    if rank is None:
        return None
    n = rank - 2
    win = window(op, n, w[2:] if w is not None else None, require_kernel=False)
    group = op.attrs.group
    if group < 1:
        op.fail(f"attribute 'group' = {group}: expected >= 1")
    out_pad = opt_attr(op, "output_padding")
    _check_ints(op, "output_padding", out_pad, n, 0)
    for i, p in enumerate(out_pad or []):
        limit = max(win.strides[i], win.dilations[i])
        if p >= limit:
            op.fail(f"attribute 'output_padding' = {list(out_pad)}: {p} at spatial axis {i} "
                    f"must be less than max(stride, dilation) = {limit}")
    out_shape = opt_attr(op, "output_shape")
    _check_ints(op, "output_shape", out_shape, n, 0)
    unknown = [D.UNKNOWN] * rank
    out, _ = conv_transpose_dims(D.inference_checks(op), win, D.from_static(x) or unknown,
                                 D.from_static(w) or unknown, _check_bias_rank(op),
                                 group, opt_attr(op, "kernel_shape"), out_pad or [0] * n,
                                 out_shape)
    return tuple(D.to_static(out))


verifier("ConvTranspose", 1, 11, 22)(_conv_transpose)
shape_rule("ConvTranspose", 1, 11, 22)(single_result(_conv_transpose))
