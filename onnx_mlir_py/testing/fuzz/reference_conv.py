"""Conv for the fuzz oracle's onnx.reference (onnx 1.23), which dilates a
kernel by inserting zero taps and then convolves densely: the input under
a hole is multiplied by 0, so a NaN or an infinity there made the output
NaN though the spec's sum never reads that element (s2670-80: a grouped
1-D Conv with dilation 2 over NaN inputs gave 3 of 45 wrong booleans after
GreaterOrEqual; s2643-15). Here each kernel tap reads its own strided
slice of the zero-padded input, so only the elements the spec sums are
multiplied (the pads' zeros are, as in the spec and onnxruntime)."""
from __future__ import annotations

import itertools

import numpy as np


def _pads(shape, kernel, strides, dilations, pads, auto_pad: str) -> list:
    """Head and tail pads per spatial axis (auto_pad as the spec computes it,
    with the dilated kernel's extent)."""
    n = len(kernel)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        head, tail = [], []
        for d, k, s, dl in zip(shape, kernel, strides, dilations):
            need = max(0, (-(-d // s) - 1) * s + (k - 1) * dl + 1 - d)
            lo = (need + 1) // 2 if auto_pad == "SAME_LOWER" else need // 2
            head.append(lo)
            tail.append(need - lo)
        return head + tail
    if auto_pad == "VALID" or pads is None:
        return [0] * (2 * n)
    return [int(p) for p in pads]


def conv(x: np.ndarray, w: np.ndarray, b=None, auto_pad="NOTSET", dilations=None, group=1,
         kernel_shape=None, pads=None, strides=None) -> np.ndarray:
    """ONNX Conv: ``sum over c, k of x_pad[n, g*C/g + c, o*s + k*d] * w[m, c, k] + b[m]``,
    accumulated in float64 (float16 / float32 inputs rounded once at the end)."""
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else (auto_pad or "NOTSET")
    nsp = x.ndim - 2
    kernel = list(w.shape[2:])
    strides = [int(s) for s in strides] if strides else [1] * nsp
    dilations = [int(d) for d in dilations] if dilations else [1] * nsp
    p = _pads(x.shape[2:], kernel, strides, dilations, pads, auto_pad)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(p[:nsp], p[nsp:])))
    out_sp = [(xp.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1
              for i in range(nsp)]
    n, m = x.shape[0], w.shape[0]
    cg, mg = x.shape[1] // group, m // group
    wd = w.astype(np.float64)
    y = np.zeros([n, m] + out_sp, np.float64)
    with np.errstate(all="ignore"):
        for gi in range(group):
            xs = xp[:, gi * cg:(gi + 1) * cg]
            ws = wd[gi * mg:(gi + 1) * mg]
            for tap in itertools.product(*[range(k) for k in kernel]):
                sl = tuple(slice(t * dl, t * dl + (o - 1) * s + 1, s)
                           for t, dl, o, s in zip(tap, dilations, out_sp, strides))
                y[:, gi * mg:(gi + 1) * mg] += np.einsum(
                    "nc...,mc->nm...", xs[(slice(None), slice(None)) + sl],
                    ws[(slice(None), slice(None)) + tap])
        if b is not None:
            y += b.astype(np.float64).reshape([1, m] + [1] * nsp)
    return y.astype(x.dtype)
