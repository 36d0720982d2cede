"""MatMul and Gemm specs."""
from __future__ import annotations

from onnx_mlir_py.testing.fuzz.ops import FLOATS, allowed, bcast, broadcastable_dims, first, spec


def matmul_shape(a, b):
    if not a or not b:
        raise ValueError("MatMul of a scalar")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise ValueError(f"MatMul inner dims {a} {b}")
    out = bcast(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


@spec("matmul", weight=3)
def matmul(g):
    r = g.rng
    a = first(g, "MatMul", rank=(1, 4))
    k = a.dims[-1]
    b = g.pick(lambda v: v.dtype == a.dtype and v.rank >= 2 and v.dims[-2] == k and v is not a,
               p_new=0.6)
    if b is None:
        batch = broadcastable_dims(g, a.dims[:-2]) if a.rank > 2 else ()
        if r.random() < 0.2 and a.rank >= 2:
            b = g.operand(a.dtype, (k,))                       # matrix x vector
        else:
            b = g.operand(a.dtype, batch + (k, g.random_dim(1, 8)), p_const=0.5)
    g.add("MatMul", [a, b], matmul_shape, a.dtype)


@spec("gemm", weight=2)
def gemm(g):
    r = g.rng
    a = first(g, "Gemm", dtypes=allowed("Gemm", g.opset) & set(FLOATS), rank=(2, 2))
    ta, tb = r.randint(0, 1), r.randint(0, 1)
    k = a.dims[0] if ta else a.dims[1]
    m = a.dims[1] if ta else a.dims[0]
    n = g.random_dim(1, 8)
    b = g.operand(a.dtype, (n, k) if tb else (k, n), p_const=0.6)
    ins = [a, b]
    if r.random() < 0.7:
        cdims = r.choice([(m, n), (n,), (g.static_dim(1), n), (m, g.static_dim(1)), ()])
        ins.append(g.operand(a.dtype, cdims, p_const=0.6))
    attrs = {"transA": ta, "transB": tb}
    if r.random() < 0.5:
        attrs["alpha"] = r.choice([0.5, 1.0, 2.0, -1.5])
    if r.random() < 0.5 and len(ins) == 3:
        attrs["beta"] = r.choice([0.0, 0.5, 1.0, 3.0])

    def shape(a_, b_, *c):
        mm, kk = (a_[1], a_[0]) if ta else a_
        k2, nn = (b_[1], b_[0]) if tb else b_
        if kk != k2:
            raise ValueError("Gemm inner dims")
        if c and bcast(c[0], (mm, nn)) != (mm, nn):
            raise ValueError("Gemm C not unidirectional")
        return (mm, nn)
    g.add("Gemm", ins, shape, a.dtype, **attrs)
