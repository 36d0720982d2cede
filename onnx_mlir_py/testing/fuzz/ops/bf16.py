"""Specs of the bf16 mode (``--precision bf16``): f32 MatMul / Gemm / Conv of
the shapes the bf16 kernels branch on, and the few ops after them whose
error ``bf16_bound`` carries (bias Add, Relu, Mul by a constant, data
movement). Only used when named (``--precision bf16`` names them all): the
default mix keeps its weights.

Shapes: K small (1, 2, 3), around whole vectors and pairs (15..17, 31..33)
and large (64..300, odd or even); N not a multiple of 16 or 32; M from 1 to
~40 (register tiles of 8 and 12 rows, 4-row tiles, single rows), often a
dynamic dim; batch matmuls with a constant or an activation B; Gemm with
transA / transB / alpha / beta / C; 1-D and 2-D Conv, 1x1 (small-K) and
3x3, strides, dilations, pads, grouped and depthwise, with and without
bias, sometimes of >= 1M multiply-adds (threaded kernels)."""
from __future__ import annotations

from onnx_mlir_py.testing.fuzz.graph import F32, Reject
from onnx_mlir_py.testing.fuzz.ops import spec
from onnx_mlir_py.testing.fuzz.ops.linalg import matmul_shape

MODE = "bf16"
KS = (1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 64, 65, 127, 128, 255, 300)
NS = (1, 3, 5, 15, 16, 17, 31, 32, 33, 47, 48, 64, 80)


def _k(g, lo: int = 1) -> int:
    ks = [k for k in KS if k >= lo]
    return g.rng.choice(ks)


def _m(g) -> tuple:
    """M: a dynamic dim half the time (per-binding sizes), else 1..40."""
    r = g.rng
    if r.random() < 0.5:
        return tuple(r.randint(1, 40) for _ in range(g.nb))
    return g.static_dim(r.choice([1, 2, 3, 4, 5, 8, 9, 12, 13, 16, 25, 40]))


def _f32(g, rank, pred=lambda v: True):
    return g.pick(lambda v: v.dtype == F32 and v.rank in rank and pred(v), p_new=0.4)


@spec("bf16_matmul", weight=3, mode=MODE)
def bf16_matmul(g):
    r = g.rng
    a = _f32(g, (2, 3, 4), lambda v: v.static(v.rank - 1) and v.dims[-1][0] <= 512)
    if a is None:
        batch = tuple(g.random_dim(1, 3) for _ in range(r.choice([0, 0, 1, 2])))
        a = g.new_input(F32, batch + (_m(g), g.static_dim(_k(g))))
    k = a.dims[-1][0]
    n = g.static_dim(r.choice(NS))
    if a.rank > 2 and r.random() < 0.35:        # batch matmul: B per batch
        b = g.operand(F32, a.dims[:-2] + (g.static_dim(k), n), p_const=0.5)
    elif r.random() < 0.1:
        b = g.operand(F32, (g.static_dim(k),), p_const=0.5)     # matrix x vector
    else:
        b = g.operand(F32, (g.static_dim(k), n), p_const=0.75)
    g.add("MatMul", [a, b], matmul_shape, F32)


@spec("bf16_gemm", weight=2, mode=MODE)
def bf16_gemm(g):
    r = g.rng
    ta, tb = int(r.random() < 0.3), int(r.random() < 0.5)
    a = _f32(g, (2,), lambda v: v.static(0 if ta else 1) and v.dims[0 if ta else 1][0] <= 512)
    if a is None:
        k, m = g.static_dim(_k(g)), _m(g)
        a = g.new_input(F32, (k, m) if ta else (m, k))
    m, k = (a.dims[1], a.dims[0]) if ta else a.dims
    n = g.static_dim(r.choice(NS))
    b = g.operand(F32, (n, k) if tb else (k, n), p_const=0.75)
    ins = [a, b]
    if r.random() < 0.6:
        ins.append(g.operand(F32, r.choice([(n,), (g.static_dim(1), n), (m, n)]), p_const=0.6))
    attrs = {"transA": ta, "transB": tb}
    if r.random() < 0.4:
        attrs["alpha"] = r.choice([0.5, 2.0, -1.5])
    if len(ins) == 3 and r.random() < 0.4:
        attrs["beta"] = r.choice([0.0, 0.5, 3.0])

    def shape(a_, b_, *_):
        mm, kk = (a_[1], a_[0]) if ta else a_
        return (mm, b_[0] if tb else b_[1])
    g.add("Gemm", ins, shape, F32, **attrs)


def _conv_out(n, k, s, d, pb, pe):
    span = (k - 1) * d + 1
    if n + pb + pe < span:
        raise Reject("window larger than the padded input")
    return (n + pb + pe - span) // s + 1


@spec("bf16_conv", weight=3, mode=MODE)
def bf16_conv(g):
    r = g.rng
    sp = 2 if r.random() < 0.8 else 1
    x = _f32(g, (sp + 2,), lambda v: v.static(1) and all(min(d) >= 1 for d in v.dims[2:]))
    big = x is None and sp == 2 and r.random() < 0.3
    if big:
        # a conv of >= 1M multiply-adds: the threaded conv_bf16 kernel
        x = g.new_input(F32, (g.static_dim(1), g.static_dim(r.choice([32, 64])),
                              g.static_dim(r.randint(20, 28)), g.static_dim(r.randint(20, 28))))
    if x is None:
        c = r.choice([1, 2, 3, 4, 8, 16, 17, 32, 33, 64])
        hw = tuple((tuple(r.randint(3, 12) for _ in range(g.nb)) if r.random() < 0.25
                    else g.static_dim(r.randint(1, 14))) for _ in range(sp))
        x = g.new_input(F32, (g.random_dim(1, 2), g.static_dim(c)) + hw)
    c = x.dims[1][0]
    one = r.random() < 0.35                         # 1x1: the small-K convs
    ks = [1 if one else 3 if big else r.choice([1, 2, 3, 3, 5]) for _ in range(sp)]
    st = [r.choice([1, 1, 2, 3]) for _ in range(sp)]
    dl = [1 if one or r.random() < 0.8 else 2 for _ in range(sp)]
    pads = [0 if one and r.random() < 0.7 else r.randint(0, 2) for _ in range(2 * sp)]
    u = 1.0 if big else r.random()
    if u < 0.15:
        grp = c                                     # depthwise
        m = c * r.choice([1, 1, 2])
    elif u < 0.3:
        grp = r.choice([d for d in range(1, c + 1) if c % d == 0])
        m = grp * r.randint(1, 3)
    else:
        grp, m = 1, r.choice([32, 64] if big else [1, 3, 8, 16, 17, 32, 48, 64])
    w = g.operand(F32, (g.static_dim(m), g.static_dim(c // grp))
                  + tuple(g.static_dim(k) for k in ks), p_const=0.9)
    ins = [x, w]
    if r.random() < 0.5:
        ins.append(g.operand(F32, (g.static_dim(m),), p_const=0.8))
    attrs = {"kernel_shape": ks, "strides": st, "dilations": dl, "pads": pads}
    if grp > 1:
        attrs["group"] = grp

    def shape(xs, *_):
        return (xs[0], m, *[_conv_out(n, ks[i], st[i], dl[i], pads[i], pads[i + sp])
                            for i, n in enumerate(xs[2:])])
    g.add("Conv", ins, shape, F32, **attrs)


@spec("bf16_after", weight=1.5, mode=MODE)
def bf16_after(g):
    """An op after a contraction: bias or residual Add, Relu, Mul by a
    constant, Transpose of the last two axes, Flatten."""
    r = g.rng
    x = _f32(g, (1, 2, 3, 4, 5))
    if x is None:
        raise Reject("nothing to follow")
    op = r.choice(["Add", "Add", "Relu", "Relu", "Mul", "Transpose", "Flatten"])
    if op == "Relu":
        g.add("Relu", [x], lambda s: s, F32)
    elif op == "Add":
        other = g.pick(lambda v: v.dtype == F32 and v.dims == x.dims and v is not x)
        if other is None:
            other = g.operand(F32, (x.dims[-1],) if r.random() < 0.6 else x.dims, p_const=0.7)
        g.add("Add", [x, other], lambda a, b: a if len(a) >= len(b) else b, F32)
    elif op == "Mul":
        c = g.const(g.random_array(F32, (1,)), F32)
        g.add("Mul", [x, c], lambda a, _: a, F32)
    elif op == "Transpose":
        if x.rank < 2:
            raise Reject("Transpose of a vector")
        perm = list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]
        g.add("Transpose", [x], lambda s: tuple(s[p] for p in perm), F32, perm=perm)
    else:
        if x.rank < 2:
            raise Reject("Flatten of a vector")

        def flat(s):
            n = 1
            for d in s[1:]:
                n *= d
            return (s[0], n)
        g.add("Flatten", [x], flat, F32, axis=1)
