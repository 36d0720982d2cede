"""Det: the determinant of each M x M matrix of X [*, M, M] -> [*].

LU decomposition with partial pivoting, matrix by matrix, on a copy of the
input (scf loops over the batch dims and the elimination steps; the copy is
updated in place with tensor.extract / tensor.insert). At step k the pivot
is the entry of largest magnitude in column k at rows k..M-1 (the first one
on ties, as LAPACK's getrf); rows k and p are swapped (columns k..M-1, the
others are no longer read), which flips the sign; the determinant is the
product of the pivots. A zero pivot (the column is zero below the diagonal)
gives 0: its multipliers are 0, so nothing is divided by it. M = 0 gives 1
(numpy.linalg.det, onnx.reference). f16 / bf16 compute in f32.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, is_float
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest, if_then_else
from onnx_mlir_py.registry import lowering

F = arith.CmpFPredicate


def _compute_type(et: ir.Type) -> ir.Type:
    return ir.F32Type.get() if et.width < 32 else et


@lowering("Det", 11, 22)
def lower_det(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    t = b.ranked(op, x)
    et, r = t.element_type, t.rank
    if not is_float(et):
        op.fail(f"input element type {et}: expected a float type")
    if r < 2:
        op.fail(f"input has rank {r}: expected [*, M, M]")
    rows, cols = b.ixdim(x, r - 2), b.ixdim(x, r - 1)
    checks(op, b).require(D.eq(rows, cols), "input has {0} rows and {1} columns; "
                          "expected square matrices [*, M, M]", rows, cols)
    ct = _compute_type(et)
    dims = b.dims(x)
    bdims, m = dims[:-2], b.as_index(dims[-1])
    # the work copy, in the compute type
    if ct == et:
        a0 = linalg.copy(x, outs=[b.empty(dims, et)])
    else:
        a0 = b.map_elementwise([x], dims, ct, lambda v: arith.extf(ct, v))
    out0 = b.empty(bdims, ct)
    one, zero = b.const(1.0, ct), b.const(0.0, ct)
    i1 = b.index(1)

    def per_matrix(bi: list, carried: list) -> list:
        a, out = carried

        def at(a, i, j):
            return tensor.extract(a, [*bi, i, j])

        def step(ks: list, c: list) -> list:
            (k,), (a, det) = ks, c
            # pivot row: the largest |a[i, k]|, i = k..m-1 (first on ties)
            def search(iv, c2):
                (i,), (p, best) = iv, c2
                v = math.absf(at(a, i, k))
                gt = arith.cmpf(F.OGT, v, best)
                return [arith.select(gt, i, p), arith.select(gt, v, best)]
            k1 = arith.addi(k, i1)
            p, _ = for_nest(b, [m], [k, math.absf(at(a, k, k))], search, lower=[k1])
            pivot = at(a, p, k)
            swap = arith.cmpi(arith.CmpIPredicate.ne, p, k)

            def do_swap():
                def sw(jv, c3):
                    (j,), (a2,) = jv, c3
                    u, w = at(a2, k, j), at(a2, p, j)
                    a2 = tensor.insert(w, a2, [*bi, k, j])
                    return [tensor.insert(u, a2, [*bi, p, j])]
                return for_nest(b, [m], [a], sw, lower=[k])
            a, = if_then_else(swap, [a.type], do_swap, lambda: [a])
            det = arith.mulf(arith.select(swap, arith.negf(det), det), pivot)
            nonzero = arith.cmpf(F.UNE, pivot, zero)

            def eliminate():
                def row(iv, c4):
                    (i,), (a3,) = iv, c4
                    f = arith.divf(at(a3, i, k), pivot)

                    def col(jv, c5):
                        (j,), (a4,) = jv, c5
                        v = arith.subf(at(a4, i, j), arith.mulf(f, at(a4, k, j)))
                        return [tensor.insert(v, a4, [*bi, i, j])]
                    return for_nest(b, [m], [a3], col, lower=[k1])
                return for_nest(b, [m], [a], row, lower=[k1])
            a, = if_then_else(nonzero, [a.type], eliminate, lambda: [a])
            return [a, det]

        a, det = for_nest(b, [m], [a, one], step)
        return [a, tensor.insert(det, out, list(bi))]

    _, out = for_nest(b, bdims, [a0, out0], per_matrix)
    if ct != et:
        out = b.map_elementwise([out], bdims, et, lambda v: arith.truncf(et, v))
    return [b.cast_to(out, b.result_type(op))]

