"""Conv and pooling specs (1-D and 2-D, with strides, pads, dilations,
groups, auto_pad, ceil_mode)."""
from __future__ import annotations

from onnx_mlir_py.testing.fuzz.graph import F32
from onnx_mlir_py.testing.fuzz.ops import FLOATS, Reject, allowed, first, spec


def _window_out(n, k, s, d, pb, pe, ceil_mode=False, opset=22):
    span = (k - 1) * d + 1
    num = n + pb + pe - span
    if num < 0:
        raise ValueError("window larger than padded input")
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= n + pb:
        # the last window would start in the end padding: dropped (the spec
        # from v22, onnxruntime), but onnx shape inference before opset 22
        # keeps it, so the checker rejects the declared shape (s2000-1226)
        if opset < 22:
            raise ValueError("ceil_mode window in the end padding before opset 22")
        out -= 1
    return out


def _auto_out(n, s, mode, k, d):
    if mode == "VALID":
        span = (k - 1) * d + 1
        if n < span:
            raise ValueError("VALID window larger than input")
        return -(-(n - span + 1) // s)
    out = -(-n // s)
    if (out - 1) * s + (k - 1) * d + 1 < n:
        # the spec's total SAME padding is negative (stride > kernel): onnxruntime's
        # AveragePool shifts the windows, its MaxPool refuses, onnx.reference fails
        # (s2002-73, -148); unspecified, so not generated
        raise ValueError("negative SAME padding")
    return out


def _spatial_attrs(g, rank, pool: bool, dilations: bool):
    r = g.rng
    sp = rank - 2
    attrs = {"kernel_shape": [r.randint(1, 3) for _ in range(sp)]}
    if r.random() < 0.5:
        attrs["strides"] = [r.randint(1, 3) for _ in range(sp)]
    if dilations and r.random() < 0.3:
        attrs["dilations"] = [r.randint(1, 2) for _ in range(sp)]
    mode = r.choice(["NOTSET"] * 5 + ["SAME_UPPER", "SAME_LOWER", "VALID"])
    if mode != "NOTSET":
        attrs["auto_pad"] = mode
    elif r.random() < 0.6:
        ks = attrs["kernel_shape"]
        hi = (lambda i: ks[i] - 1) if pool else (lambda i: 2)
        attrs["pads"] = [r.randint(0, hi(i % sp)) for i in range(2 * sp)]
    return attrs


def _out_spatial(attrs, sizes, ceil_mode=False, opset=22):
    sp = len(sizes)
    ks = attrs["kernel_shape"]
    st = attrs.get("strides", [1] * sp)
    dl = attrs.get("dilations", [1] * sp)
    pads = attrs.get("pads", [0] * (2 * sp))
    mode = attrs.get("auto_pad", "NOTSET")
    out = []
    for i, n in enumerate(sizes):
        o = (_window_out(n, ks[i], st[i], dl[i], pads[i], pads[i + sp], ceil_mode, opset)
             if mode == "NOTSET" else _auto_out(n, st[i], mode, ks[i], dl[i]))
        if o <= 0:
            raise ValueError("empty output")
        out.append(o)
    return out


def _image(g, op):
    types = allowed(op, g.opset) & set(FLOATS)
    if F32 in types and g.rng.random() < 0.15:
        return _wide_image(g)
    return first(g, op, dtypes=types, rank=(3, 4),
                 pred=lambda v: v.static(1) and all(d[0] >= 1 for d in v.dims[2:]))


def _wide_image(g):
    """A new f32 image of a network's stem: 1 to 4 channels, rows of 17 to 48
    (whole vectors of output columns, then a partial one: -O3's direct stem
    conv, passes/optimize/conv_direct.py, and the dynamic pools' loop of
    whole chunks, pool_dyn.py); H and W dynamic 30% of the time (each
    binding its own size)."""
    r = g.rng

    def dim(lo, hi):
        if r.random() < 0.3:
            return tuple(r.randint(lo, hi) for _ in range(g.nb))
        return g.static_dim(r.randint(lo, hi))
    return g.operand(F32, (g.static_dim(1), g.static_dim(r.randint(1, 4)), dim(4, 12),
                           dim(17, 48)))


@spec("conv", weight=2.5)
def conv(g):
    r = g.rng
    x = _image(g, "Conv")
    c = x.dims[1][0]
    attrs = _spatial_attrs(g, x.rank, pool=False, dilations=True)
    if "dilations" in attrs and attrs.get("auto_pad", "NOTSET").startswith("SAME"):
        raise Reject("onnxruntime: no dilations with SAME auto_pad")
    if c == 0:
        raise Reject("Conv over zero input channels")
    groups = [d for d in range(1, c + 1) if c % d == 0]
    grp = r.choice(groups) if r.random() < 0.4 else 1
    m = grp * r.randint(1, 3)
    wide = x.rank == 4 and x.dims[3][0] >= 17
    if grp == 1 and r.random() < (0.6 if wide else 0.2):
        # whole vectors of filters: -O3's pixel-row form (passes/optimize/conv_pixel_rows.py),
        # and on a wide image of few channels the direct stem conv (conv_direct.py)
        m = r.choice([8, 16, 32, 64] if wide else [32, 48, 64, 96])
    if grp > 1:
        attrs["group"] = grp
    w = g.operand(x.dtype, (g.static_dim(m), g.static_dim(c // grp))
                  + tuple(g.static_dim(k) for k in attrs["kernel_shape"]), p_const=0.7)
    ins = [x, w]
    if r.random() < 0.5:
        ins.append(g.operand(x.dtype, (g.static_dim(m),), p_const=0.7))
    if r.random() < 0.5 and "kernel_shape" in attrs:
        attrs.pop("kernel_shape")       # inferred from the weight
        ks = list(w.shape()[2:])
    else:
        ks = attrs["kernel_shape"]

    def shape(xs, *_):
        return (xs[0], m, *_out_spatial({**attrs, "kernel_shape": ks}, xs[2:]))
    g.add("Conv", ins, shape, x.dtype, **attrs)


@spec("pool", weight=2)
def pool(g):
    r = g.rng
    op = r.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"])
    x = _image(g, op)
    if op.startswith("Global"):
        g.add(op, [x], lambda s: s[:2] + (1,) * (len(s) - 2), x.dtype)
        return
    dil = op == "MaxPool" or (op == "AveragePool" and g.opset >= 19) or \
        (op == "LpPool" and g.opset >= 18)
    attrs = _spatial_attrs(g, x.rank, pool=True, dilations=dil)
    ceil_mode = 0
    if op != "LpPool" or g.opset >= 18:
        ceil_mode = int(r.random() < 0.3)
    if ceil_mode:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and r.random() < 0.5:
        attrs["count_include_pad"] = 1
    if op == "LpPool":
        attrs["p"] = r.choice([1, 2, 3])
    if "dilations" in attrs and attrs.get("auto_pad", "NOTSET").startswith("SAME"):
        raise Reject("onnxruntime: no dilations with SAME auto_pad")
    if ceil_mode and attrs.get("auto_pad", "NOTSET") != "NOTSET":
        raise Reject("ceil_mode with auto_pad")

    def shape(xs):
        return (xs[0], xs[1], *_out_spatial(attrs, xs[2:], bool(ceil_mode), g.opset))
    g.add(op, [x], shape, x.dtype, **attrs)
