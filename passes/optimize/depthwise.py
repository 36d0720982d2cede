"""Depthwise convolutions -> the vector row kernel (:mod:`.row_kernel`).

``linalg.depthwise_conv_2d_nchw_chw`` (f32, static; a dynamic batch runs the
batch-1 kernel once per image, see :mod:`.batch_loop`) with input ``[N, C, H, W]``,
weights ``[C, KH, KW]``, strides s and dilations d is matched here, with its
fusable neighbours, and replaced by a call of the row kernel
(:mod:`.window_rewrite`): one FMA per tap on vectors of output columns.

Why not upstream: linalg's conv vectorizer only handles 1-D layouts, and a
tap-sum ``linalg.generic`` over strided views, tiled and vectorized, turned
stride-2 reads into scalar loads and spilled its hoisted weight broadcasts.

Padding: when the conv's input is a ``tensor.pad`` with zeros (the Conv
lowering's) used only by the conv, the pad is fused: the kernel copies each
(n, c) plane into a scratch plane with a zero border (:mod:`.row_plane`).
Prologue: with a fused pad whose input is a unary elementwise generic used
only by it (a 1x1 conv's ReLU6 / HardSwish before a depthwise conv, the
MobileNet block), the kernel reads that generic's input and applies its ops
in that copy, so the activation is no separate pass through memory.

Fused neighbours (each only when it is the single user): a per-channel bias
add (``x + b[c]``, as produced by the Conv lowering) becomes the
accumulator's initial value, and a following elementwise generic whose body
uses only arith/math ops on f32 and scalars defined outside it (ReLU,
Clip, ...) is applied to the accumulator before the store. Other inits: the
scalar of the ``linalg.fill`` that produced the output, else the output
tensor itself. The bias is added first, so results differ from the unfused
``conv + bias`` in rounding only.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, bias_add_user, epilogue_user,
                                                        fill_scalar, prologue_producer,
                                                        static_f32, window_ints, zero_fill,
                                                        zero_pad)
from onnx_mlir_py.passes.optimize.row_plan import Conv
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.window_rewrite import rewrite_all


# The row kernel unrolls every tap of the window: beyond this many the kernel
# text explodes (a 1x200 MaxPool gave 7.4 MB and the inliner ran for minutes,
# test_MaxPool1d_stride_padding_dilation); such windows keep the generic code.
MAX_TAPS = 81


def window_fits(op: ir.Operation, xs, kernel, os_) -> tuple[list, list] | None:
    """(strides, dilations) of a 2-D window op whose every output window
    (``kernel`` taps, NCHW ``xs`` -> ``os_``) lies in the input, and that has
    at most MAX_TAPS taps; else None."""
    if kernel[0] * kernel[1] > MAX_TAPS:
        return None
    s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    if len(s) != 2 or len(d) != 2 or min(s + d) < 1:
        return None
    if any((os_[2 + i] - 1) * s[i] + (kernel[i] - 1) * d[i] + 1 > xs[2 + i] for i in range(2)):
        return None
    return s, d


def kernel_operands(op: ir.Operation, x: ir.Value, fill, bias=None):
    """``(init, operands, ops to erase, op whose result is replaced, Conv
    keywords)`` of the row kernel for the window op ``op`` on ``x``: its start
    (the fused bias add, the output's constant fill, or the output itself)
    and the fused elementwise user with its captured operands."""
    operands = [x, op.operands[1]]
    if bias is not None:
        init = "bias"
        operands += [fill[1], bias[1]]
    elif fill is not None:
        init = "scalar"
        operands += [fill[1], fill[0]]
    else:
        init = "out"
        operands += [op.operands[2]]
    erase = [op] + ([bias[0]] if bias is not None else [])
    last = bias[0] if bias is not None else op
    kw = {}
    epi = epilogue_user(last.results[0])
    if epi is not None:
        kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3]))
        operands += list(epi[3])
        erase.append(epi[0])
        last = epi[0]
    return init, operands, erase, last, kw


def depthwise_window(op: ir.Operation):
    """``(x shape, w shape, out shape, strides, dilations)`` of an f32
    depthwise conv the row kernel takes (static but for a dynamic batch,
    None), or None."""
    if op.name != "linalg.depthwise_conv_2d_nchw_chw":
        return None
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    # static, but for a dynamic batch (None): a loop around the batch-1 kernel
    shapes = [batch_shape(op.operands[0]), static_f32(op.operands[1]), batch_shape(op.operands[2])]
    if any(sh is None for sh in shapes) or 0 in sum(shapes, []):
        return None
    xs, ws, os_ = shapes
    if len(xs) != 4 or len(ws) != 3 or len(os_) != 4 or ws[0] != xs[1] \
            or os_[:2] != xs[:2]:
        return None
    win = window_fits(op, xs, ws[1:], os_)
    if win is None:
        return None
    return xs, ws, os_, win[0], win[1]


def _match(op: ir.Operation):
    """``(Conv, operands, ops to erase, op whose result is replaced)`` or None."""
    found = depthwise_window(op)
    if found is None:
        return None
    xs, ws, os_, s, d = found
    x = op.operands[0]
    padded = zero_pad(x)
    pad: tuple = ()
    pro = None
    if padded is not None:
        x, pad = padded
        # the elementwise op before the pad (a 1x1 conv's ReLU6): applied in the plane copy
        pro = prologue_producer(x)
        if pro is not None:
            x = pro[4]
        xs = batch_shape(x)
    fill = fill_scalar(op.operands[2])
    # the bias replaces the fill value as the start: only when that is 0.0
    bias = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
    init, operands, erase, last, kw = kernel_operands(op, x, fill, bias)
    dead = []
    if pro is not None:
        kw.update(prologue=pro[1], pro_result=pro[2], n_pcap=len(pro[3]))
        operands += list(pro[3])
        dead = [owner_op(op.operands[0]), pro[0]]      # the pad, then the prologue generic
    cv = Conv(tuple(xs), tuple(pad), ws[1], ws[2], tuple(os_), tuple(s), tuple(d), init, **kw)
    return cv, operands, erase, last, dead


def depthwise_convs(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Replace every static f32 depthwise conv (with its zero pad, bias add
    and elementwise epilogue when fusable; with a kernel ``plan``: those it
    gave to ``depthwise_rows``) by the row kernel (inlined private
    functions). Returns how many were rewritten."""
    return rewrite_all(module, "linalg.depthwise_conv_2d_nchw_chw", _match, "__om_depthwise",
                       target, threads, plan, "depthwise_rows")
