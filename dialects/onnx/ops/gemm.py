"""Matrix products: Gemm, MatMul (MatMulInteger: integer_ops.py; Einsum: einsum.py).

* Gemm (v7+): A [M, K] (transA: [K, M]), B [K, N] (transB: [N, K]), optional
  (v11+) C unidirectionally broadcastable to [M, N]; Y is [M, N]. Versions 1
  and 6 (``broadcast`` attribute) predate opset 7 and are not covered.
* MatMul: numpy.matmul -- a 1-D A is promoted to [1, K] and
  a 1-D B to [K, 1] (the added dim is removed from the result), batch dims
  broadcast.
"""
from __future__ import annotations


from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result


def _same(a, b) -> bool:
    return a is None or b is None or a == b


# -- Gemm ------------------------------------------------------------------------

def _gemm(op: OnnxOp):
    a, b = op.shape(op.input(0)), op.shape(op.input(1))
    for name, s in (("A", a), ("B", b)):
        if s is not None and len(s) != 2:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 2, got rank {len(s)}")
    ta, tb = op.attrs.transA, op.attrs.transB
    m = k_a = k_b = n = None
    if a is not None:
        m, k_a = (a[1], a[0]) if ta else (a[0], a[1])
    if b is not None:
        k_b, n = (b[1], b[0]) if tb else (b[0], b[1])
    if not _same(k_a, k_b):
        op.fail(f"inner dimensions differ: A {fmt(a)} (transA={ta}) has K = {k_a}, "
                f"B {fmt(b)} (transB={tb}) has K = {k_b}")
    c = op.shape(op.input(2))
    if c is not None:
        if len(c) > 2:
            op.fail(f"input 'C' has shape {fmt(c)}: expected rank <= 2 "
                    f"(unidirectionally broadcastable to [M, N]), got rank {len(c)}")
        for cd, yd, what in zip(reversed(c), (n, m), ("N", "M")):
            if cd is not None and cd != 1 and yd is not None and cd != yd:
                op.fail(f"input 'C' has shape {fmt(c)}: not unidirectionally broadcastable to "
                        f"[M, N] = {fmt((m, n))} ({what}: expected 1 or {yd}, got {cd})")
    if a is None or b is None:
        return None
    return (m, n)


@verifier("Gemm", 7, 9, 11, 13)
def _gemm_verify(op: OnnxOp):
    _gemm(op)


shape_rule("Gemm", 7, 9, 11, 13)(single_result(_gemm))


# -- MatMul / MatMulInteger ------------------------------------------------------------

def matmul_shape(op: OnnxOp, a, b):
    """numpy.matmul result shape (None if a rank is unknown); checks K."""
    for name, s in (("A", a), ("B", b)):
        if s is not None and len(s) < 1:
            op.fail(f"input '{name}' is a scalar: expected rank >= 1")
    if a is None or b is None:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not _same(a2[-1], b2[-2]):
        op.fail(f"inner dimensions differ: A {fmt(a)} has K = {a2[-1]}, "
                f"B {fmt(b)} has K = {b2[-2]}")
    batch = broadcast_shapes(op, [a2[:-2], b2[:-2]])
    out = list(batch)
    if len(a) > 1:
        out.append(a2[-2])
    if len(b) > 1:
        out.append(b2[-1])
    return tuple(out)


@verifier("MatMul", 1, 9, 13)
def _matmul_verify(op: OnnxOp):
    matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(1)))


@shape_rule("MatMul", 1, 9, 13)
def _matmul_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(1)))
    return [tensor(shape, et) if et is not None else None]
