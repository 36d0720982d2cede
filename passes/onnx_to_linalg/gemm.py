"""Gemm and MatMul -> linalg.matmul / linalg.batch_matmul (+ epilogue).

MatMul: 2-D x 2-D -> matmul; N-D x 2-D -> collapse leading dims, matmul,
expand; equal batch dims -> collapse batch dims, batch_matmul, expand;
anything else (1-D operands, broadcast batch dims) -> a linalg.generic
contraction with broadcasting maps.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg import bf16
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float, val
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, require_same_dim, wrap
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import (broadcast_dim, broadcast_generic,
                                                          runtime_broadcast)
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse, expand


def _zero(et):
    return 0.0 if is_float(et) else 0


def _mul(x, y):
    return arith.mulf(x, y) if is_float(x.type) else arith.muli(x, y)


def _add(x, y):
    return arith.addf(x, y) if is_float(x.type) else arith.addi(x, y)


def is_half(et) -> bool:
    """f16 / bf16: contractions read it as f32, accumulate in f32 and round
    once at the end, as numpy (onnx.reference) and onnxruntime do; in f16 an
    attention's Q.K^T lost several ulp (test_attention_4d_fp16)."""
    return is_float(et) and et.width < 32


def widen(b: LoweringContext, v):
    """v as f32 (None stays None)."""
    if v is None:
        return None
    f32 = ir.F32Type.get()
    return b.map_elementwise([v], b.dims(v), f32, lambda x: arith.extf(f32, x))


def narrow(b: LoweringContext, y, et: ir.Type):
    return b.map_elementwise([y], b.dims(y), et, lambda x: arith.truncf(et, x))


def transpose2d(b: LoweringContext, x: ir.Value) -> ir.Value:
    d = b.dims(x)
    return val(linalg.transpose(x, outs=[b.empty([d[1], d[0]], x.type.element_type)],
                            permutation=[1, 0]))


def matmul2d(b: LoweringContext, a: ir.Value, w: ir.Value, et: ir.Type) -> ir.Value:
    m, n = b.dim(a, 0), b.dim(w, 1)
    acc = b.full([m, n], et, _zero(et))
    return linalg.matmul(a, w, outs=[acc])


@lowering("Gemm", 7, 9, 11, 13)
def lower_gemm(op: OnnxOp, b: LoweringContext):
    et = b.result_type(op).element_type
    if is_half(et):  # the epilogue (in f32) rounds: broadcast_generic yields et
        y = _gemm(op, b, *(widen(b, op.input(i)) for i in range(3)), ir.F32Type.get(),
                  lambda v: arith.truncf(et, v))
        return [y if y.type.element_type == et else narrow(b, y, et)]
    a, w = bf16.operands(b, et, op.input(0), op.input(1))    # --precision bf16
    return [_gemm(op, b, a, w, op.input(2), et, lambda v: v)]


def _gemm(op: OnnxOp, b: LoweringContext, a, w, c, et, down) -> ir.Value:
    for v in (a, w):
        if b.ranked(op, v).rank != 2:
            op.fail("A and B must be 2-D")
    # the contraction (K) dims: A's dim 1 (0 with transA), B's dim 0 (1 with transB)
    require_same_dim(op, b, a, 0 if op.attrs.transA else 1, w, 1 if op.attrs.transB else 0,
                     "A", "B")
    if op.attrs.transA:
        a = transpose2d(b, a)
    if op.attrs.transB:
        w = transpose2d(b, w)
    y = matmul2d(b, a, w, et)
    alpha, beta = op.attrs.alpha, op.attrs.beta
    if c is None or beta == 0.0:
        if alpha == 1.0:
            return y
        return broadcast_generic(op, b, [y], lambda s: down(_mul(s, b.const(alpha, et))))
    if c.type.rank > 2:
        op.fail("C must be broadcastable to (M, N)")

    def epilogue(s, cs):
        if alpha != 1.0:
            s = _mul(s, b.const(alpha, et))
        if beta != 1.0:
            cs = _mul(cs, b.const(beta, et))
        return down(_add(s, cs))
    return broadcast_generic(op, b, [y, c], epilogue)


def _batch_out_dims(op: OnnxOp, b: LoweringContext, a: ir.Value, w: ir.Value,
                    nb: int) -> tuple[list, dict]:
    """The result's ``nb`` batch dims (int | index Value): a dynamic one is the
    larger of the operands' dims there (equal, or 1 that broadcasts). Also
    ``{i: (v, j)}`` for result dims that are operand v's dim j itself."""
    sole = {}

    def dyn(i):
        ds = []
        for v in (a, w):
            rv = v.type.rank
            j = i - (nb - (rv - 2))
            if rv > 2 and j >= 0 and v.type.is_dynamic_dim(j):
                ds.append((v, j))
        if not ds:
            return 1
        if len(ds) == 1:
            sole[i] = ds[0]
            return b.dim(*ds[0])
        return broadcast_dim(b.dim(*ds[0]), b.dim(*ds[1]))
    t = b.result_type(op)
    return [dyn(i) if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(nb)], sole


def _bcast_batch(op: OnnxOp, b: LoweringContext, v: ir.Value, name: str, out_batch: list,
                 sole: dict) -> ir.Value:
    """``v`` with each dynamic batch dim that is 1 at run time (where the
    result's is not) broadcast to the result's, so ``v`` can be indexed with
    the result's batch loops; a run-time check that each is the result's or 1."""
    rv, nb = v.type.rank, len(out_batch)
    if rv <= 2:
        return v
    off = nb - (rv - 2)
    dims = [out_batch[off + j] for j in range(rv - 2)] + [b.dim(v, rv - 2), b.dim(v, rv - 1)]
    own = {rv - 2: (v, rv - 2), rv - 1: (v, rv - 1)}
    own.update({j: (v, j) for j in range(rv - 2) if sole.get(off + j) == (v, j)})
    chk = checks(op, b)
    for j in range(rv - 2):
        if v.type.is_dynamic_dim(j) and j not in own:
            dv, do = b.ixdim(v, j), wrap(dims[j])
            chk.require(D.either(D.eq(dv, do), D.eq(dv, 1)),
                        f"batch dims do not broadcast: dim {j} of {name} is {{0}}, "
                        f"the other input needs {{1}} (or 1)", dv, do)
    v = runtime_broadcast(b, v, dims, rv, own)
    # now each dynamic batch dim is the result's: give v the static ones
    # (collapsing a dynamic one next to the other operand's static one broke
    # expand_shape); a static 1 stays (the generic path broadcasts it)
    t = v.type
    shape = [d if isinstance(d, int) and t.is_dynamic_dim(j) else t.shape[j]
             for j, d in enumerate(dims[:-2])]
    return b.cast_to(v, ir.RankedTensorType.get(shape + list(v.type.shape[-2:]),
                                                v.type.element_type))


def _check_k(op: OnnxOp, b: LoweringContext, a: ir.Value, w: ir.Value) -> None:
    """A's last dim must equal B's contraction dim (checked at run time if dynamic)."""
    ka = b.ixdim(a, a.type.rank - 1)
    kw = b.ixdim(w, max(w.type.rank - 2, 0))
    checks(op, b).require(D.eq(ka, kw), "inner dimensions differ: A has K = {0}, "
                          "B has K = {1}", ka, kw)


def _batch_matmul_ok(a: ir.Value, w: ir.Value, nb: int) -> bool:
    """Batch dims usable by batch_matmul once dynamic 1s are broadcast: no
    static 1 facing a dim that may be larger."""
    ta, tw = a.type, w.type
    for k in range(nb):
        sa = None if ta.is_dynamic_dim(k) else ta.shape[k]
        sw = None if tw.is_dynamic_dim(k) else tw.shape[k]
        if (sa == 1) != (sw == 1):
            return False
        if sa is not None and sw is not None and sa != sw:
            return False
    return True


def _collapsed_type(x: ir.Value, groups, et) -> ir.Type:
    t = x.type
    dims = []
    for g in groups:
        if any(t.is_dynamic_dim(i) for i in g):
            dims.append(ir.ShapedType.get_dynamic_size())
        else:
            p = 1
            for i in g:
                p *= t.shape[i]
            dims.append(p)
    return ir.RankedTensorType.get(dims, et)


@lowering("MatMul", 1, 9, 13)
def lower_matmul(op: OnnxOp, b: LoweringContext):
    a, w = op.input(0), op.input(1)
    b.ranked(op, a), b.ranked(op, w)
    out_t = b.result_type(op)
    et = out_t.element_type
    if is_half(et):
        f32 = ir.F32Type.get()
        wide = ir.RankedTensorType.get(list(out_t.shape), f32)
        return [narrow(b, _matmul(op, b, widen(b, a), widen(b, w), wide), et)]
    a, w = bf16.operands(b, et, a, w)                       # --precision bf16
    return [_matmul(op, b, a, w, out_t)]


def _matmul(op: OnnxOp, b: LoweringContext, a, w, out_t) -> ir.Value:
    ra, rw = a.type.rank, w.type.rank
    et = out_t.element_type
    _check_k(op, b, a, w)
    if ra == 2 and rw == 2:
        return matmul2d(b, a, w, et)
    if ra > 2 and rw == 2:
        # (..., M, K) x (K, N): collapse leading dims into M
        g = [list(range(ra - 1)), [ra - 1]]
        a2 = collapse(a, g, _collapsed_type(a, g, a.type.element_type))
        y = matmul2d(b, a2, w, et)
        out_dims = b.dims(a)[:-1] + [b.dim(w, 1)]
        return expand(b, y, [list(range(ra - 1)), [ra - 1]], out_dims)
    if ra == rw and ra >= 3 and _batch_matmul_ok(a, w, ra - 2):
        nb = ra - 2
        out_batch, sole = _batch_out_dims(op, b, a, w, nb)
        a = _bcast_batch(op, b, a, "A", out_batch, sole)
        w = _bcast_batch(op, b, w, "B", out_batch, sole)
        ga = [list(range(nb)), [nb], [nb + 1]]
        if nb > 1:
            a3 = collapse(a, ga, _collapsed_type(a, ga, a.type.element_type))
            w3 = collapse(w, ga, _collapsed_type(w, ga, w.type.element_type))
        else:
            a3, w3 = a, w
        dims = [b.dim(a3, 0), b.dim(a3, 1), b.dim(w3, 2)]
        y = linalg.batch_matmul(a3, w3, outs=[b.full(dims, et, _zero(et))])
        if nb == 1:
            return y
        out_dims = out_batch + [b.dim(a, ra - 2), b.dim(w, ra - 1)]
        return expand(b, y, ga, out_dims)
    return _matmul_generic(op, b, a, w, out_t)


def _matmul_generic(op: OnnxOp, b: LoweringContext, a, w, out_t) -> ir.Value:
    """numpy matmul semantics as one contraction: loops (batch..., [m], [n], k)."""
    ra, rw, ro = a.type.rank, w.type.rank, out_t.rank
    has_m, has_n = ra >= 2, rw >= 2
    nb = ro - int(has_m) - int(has_n)
    n_loops = ro + 1
    k = ro
    m_loop = nb if has_m else None
    n_loop = (nb + int(has_m)) if has_n else None

    def batch_exprs(v, rv):
        vb = rv - 2
        ex = []
        for j in range(vb):
            loop = nb - vb + j
            ex.append("0" if (not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
                              and (out_t.is_dynamic_dim(loop) or out_t.shape[loop] != 1))
                      else loop)
        return ex
    a_map = (batch_exprs(a, ra) + [m_loop, k]) if has_m else [k]
    w_map = (batch_exprs(w, rw) + [k, n_loop]) if has_n else [k]
    o_map = list(range(ro))

    batch, sole = _batch_out_dims(op, b, a, w, nb)
    a = _bcast_batch(op, b, a, "A", batch, sole)
    w = _bcast_batch(op, b, w, "B", batch, sole)
    dims = batch + [int(out_t.shape[i]) if not out_t.is_dynamic_dim(i) else
                    b.dim(a, ra - 2) if i == m_loop else b.dim(w, rw - 1)
                    for i in range(nb, ro)]
    init = b.full(dims, out_t.element_type, _zero(out_t.element_type))
    return b.generic([a, w], [init], [affine_map(n_loops, a_map), affine_map(n_loops, w_map),
                                      affine_map(n_loops, o_map)],
                     ["parallel"] * ro + ["reduction"],
                     lambda x, y, acc: _add(acc, _mul(bf16.widen_to(x, acc.type),
                                                      bf16.widen_to(y, acc.type))))[0]
