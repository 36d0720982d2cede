"""Einsum -> one linalg.generic with the equation's indexing maps.

Loops: the output dims first (parallel: the labels and ``...`` dims in the
output's order), then the summed labels (reduction). Each input's map reads
its labels' loops (a repeated label reads the same loop twice: a diagonal);
its ``...`` dims are the trailing ones of the broadcast ``...`` shape. An
input dim that is a static 1 where the label is larger reads index 0; a
dynamic one that is 1 at run time is broadcast first (``runtime_broadcast``).
The sizes and their checks come from the shape helper
(``dialects/onnx/ops/einsum.py::einsum_dims``). f16/bf16 accumulate in f32
and round once, as onnxruntime does.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.einsum import ELL, einsum_dims, parse_equation
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of


def _loop_labels(terms, out_labels, ell_rank):
    """-> (loop names in order, number of parallel loops). ``...`` dims are
    named ('...', i)."""
    ell = [(ELL, i) for i in range(ell_rank)]
    par = []
    for t in out_labels:
        par.extend(ell if t == ELL else [t])
    red = []
    for term in terms:
        for t in term:
            names = ell if t == ELL else [t]
            red.extend(n for n in names if n not in par and n not in red)
    return par + red, len(par)


def _operand_names(term, rank, ell_rank):
    """The loop name of each dim of an input."""
    n_letters = sum(t != ELL for t in term)
    names = []
    for t in term:
        if t == ELL:
            r = rank - n_letters
            names.extend((ELL, ell_rank - r + j) for j in range(r))
        else:
            names.append(t)
    return names


@lowering("Einsum", 12, 28)
def lower_einsum(op: OnnxOp, b: LoweringContext):
    ins = op.variadic()
    for v in ins:
        b.ranked(op, v)
    terms, out_labels = parse_equation(op, len(ins))
    shapes = [b.ixdims(v) for v in ins]
    sizes, ell, out = einsum_dims(op, checks(op, b), terms, out_labels, shapes)
    ell = ell or []
    size_of = dict(sizes)
    size_of.update({(ELL, i): d for i, d in enumerate(ell)})
    loops, n_par = _loop_labels(terms, out_labels, len(ell))
    pos = {n: i for i, n in enumerate(loops)}
    maps, operands = [], []
    for v, term, s in zip(ins, terms, shapes):
        names = _operand_names(term, v.type.rank, len(ell))
        exprs, target, own = [], [], {}
        for j, n in enumerate(names):
            want = size_of[n]
            target.append(index_of(want))
            if want is s[j]:
                own[j] = (v, j)
            if D.is_static(s[j]) and s[j] == 1 and not (D.is_static(want) and want == 1):
                exprs.append("0")       # a static 1 broadcast along the label
                own[j] = (v, j)
            else:
                exprs.append(pos[n])
        v = runtime_broadcast(b, v, target, v.type.rank, own)
        operands.append(v)
        maps.append(affine_map(len(loops), exprs))
    et = b.result_type(op).element_type
    half = is_float(et) and et.width < 32
    acc_t = ir.F32Type.get() if half else et
    fl = is_float(et)
    out_dims = [index_of(d) for d in out]
    init = b.full(out_dims, acc_t, 0.0 if fl else 0)
    maps.append(affine_map(len(loops), list(range(n_par))))
    its = ["parallel"] * n_par + ["reduction"] * (len(loops) - n_par)

    def body(*args):
        *xs, acc = args
        if half:
            xs = [arith.extf(acc_t, x) for x in xs]
        p = xs[0]
        for x in xs[1:]:
            p = arith.mulf(p, x) if fl else arith.muli(p, x)
        return arith.addf(acc, p) if fl else arith.addi(acc, p)
    y = b.generic(operands, [init], maps, its, body)[0]
    if half:
        y = b.map_elementwise([y], out_dims, et, lambda x: arith.truncf(et, x))
    return [b.cast_to(y, b.result_type(op))]
