"""Quantization and SiLU specs: QuantizeLinear -> DequantizeLinear (fake
quantization, u8 or s8, per tensor), the QDQ conv group that -O3 runs on
its int8 kernels on a VNNI CPU (passes/optimize_onnx/quantize.py,
passes/optimize/conv_q8.py): DQ(Q(x)) and DQ(int8 weight, per-channel
scales) into a Conv (bias optional, ReLU optional), then Q -> DQ; and
SiLU, ``x * Sigmoid(x)``, which -O3 fuses into conv epilogues.

A computed value within its rounding error of a quantization step's tie
rounds either way (oracle ``conditioning``: QuantizeLinear is an
elementwise op there)."""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.testing.fuzz.graph import F32, I8, U8
from onnx_mlir_py.testing.fuzz.ops import Reject, first, spec
from onnx_mlir_py.testing.fuzz.ops.conv import _image, _out_spatial, _spatial_attrs


def _fake_quant(g, x, qtype: int, lo: float = 0.005, hi: float = 0.1):
    """(DQ(Q(x)), its scale) with a per-tensor scale in [lo, hi] and a zero
    point of ``qtype``."""
    zp = g.const(np.array(g.rng.randint(64, 127) if qtype == U8 else g.rng.randint(-20, 63),
                          np.uint8 if qtype == U8 else np.int8), qtype)
    sv = np.float32(g.rng.uniform(lo, hi))
    s = g.const(np.array(sv, np.float32), F32)
    (q,) = g.add("QuantizeLinear", [x, s, zp], lambda a, *_: a, qtype, usable=False)
    (y,) = g.add("DequantizeLinear", [q, s, zp], lambda a, *_: a, F32)
    return y, sv


@spec("silu", weight=1)
def silu(g):
    x = first(g, "Sigmoid", dtypes={F32})
    (s,) = g.add("Sigmoid", [x], lambda a: a, F32, usable=False)
    g.add("Mul", [x, s], lambda a, b: a, F32)


@spec("qdq", weight=1, min_opset=13)
def qdq(g):
    x = first(g, "QuantizeLinear", dtypes={F32})
    _fake_quant(g, x, g.rng.choice([U8, I8]))


@spec("qdq_conv", weight=1, min_opset=13)
def qdq_conv(g):
    r = g.rng
    x = _image(g, "Conv")
    if x.dtype != F32 or x.rank != 4:
        raise Reject("the QDQ conv group is 2-D f32")
    c = x.dims[1][0]
    attrs = _spatial_attrs(g, x.rank, pool=False, dilations=False)
    grp = c if r.random() < 0.3 else 1          # depthwise sometimes
    m = grp * r.randint(1, 2) if grp > 1 else r.choice([4, 8, 16, 32])
    if grp > 1:
        attrs["group"] = grp
    ks = attrs["kernel_shape"]
    xq, sx = _fake_quant(g, x, r.choice([U8, I8]))
    wq = np.array(g.nrng.integers(-127, 128, (m, c // grp, *ks)), np.int8)
    wsv = np.array(g.nrng.uniform(0.002, 0.05, m), np.float32)
    w_shape = (m, c // grp, *ks)
    (w,) = g.add("DequantizeLinear", [g.const(wq, I8), g.const(wsv, F32),
                                      g.const(np.zeros(m, np.int8), I8)],
                 lambda *_: w_shape, F32, usable=False, axis=0)
    ins = [xq, w]
    if r.random() < 0.6:       # an int32 bias of scale sx * sw, as quantize_static makes
        bq = g.const(np.array(g.nrng.integers(-3000, 3000, m), np.int32))
        (b,) = g.add("DequantizeLinear", [bq, g.const((sx * wsv).astype(np.float32), F32)],
                     lambda *_: (m,), F32, usable=False, axis=0)
        ins.append(b)

    def shape(xs, *_):
        return (xs[0], m, *_out_spatial(attrs, xs[2:]))
    (y,) = g.add("Conv", ins, shape, F32, shape_args=[xq], usable=False, **attrs)
    if r.random() < 0.4:
        (y,) = g.add("Relu", [y], lambda a: a, F32, usable=False)
    _fake_quant(g, y, r.choice([U8, I8]), 0.02, 0.5)
