"""Numpy broadcasting for the lowerings: ``broadcast_generic`` builds the
linalg.generic of an elementwise op over its result's shape.

An input dim that is statically 1 where the result's is not reads index 0;
dynamic result dims are the largest of the inputs' dims there (equal, or 1
that broadcasts); an input whose dynamic dim turns out to be 1 at run time
where the result's is not is broadcast first, in a run-time branch
(``runtime_broadcast``), and a run-time check makes incompatible dims fail
naming the node.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map

I = arith.CmpIPredicate


def broadcast_dim(d: ir.Value, e: ir.Value) -> ir.Value:
    """numpy's broadcast of two run-time dims that are equal or 1: ``e`` if
    ``d`` is 1, else ``d`` (not their max: 0 against 1 is 0)."""
    one = arith.constant(ir.IndexType.get(), 1)
    return arith.select(arith.cmpi(I.eq, d, one), e, d)


def _dim_root(v: ir.Value, j: int):
    """Where dim ``j`` of ``v`` comes from: through the results of linalg ops
    (a result's dims are its init's), ``tensor.empty`` sizes and
    ``tensor.dim`` of a constant index, to the first value it cannot follow:
    ``(value, dim)`` or an index value. Equal roots: equal dims."""
    from onnx_mlir_py.dialects.onnx.opview import owner_op
    for _ in range(256):
        o = owner_op(v)
        if o is None:
            break
        if o.name.startswith("linalg.") and len(o.results) >= 1 \
                and len(o.operands) >= len(o.results):
            k = ir.OpResult(v).result_number
            init = o.operands[len(o.operands) - len(o.results) + k]
            if init.type != v.type:     # not its destination (a pack's padding value)
                break
            v = init
            continue
        if o.name != "tensor.empty":
            break
        size = o.operands[sum(1 for i in range(j) if v.type.is_dynamic_dim(i))]
        d = owner_op(size)
        c = owner_op(d.operands[1]) if d is not None and d.name == "tensor.dim" else None
        if c is None or c.name != "arith.constant":
            return size
        v, j = d.operands[0], ir.IntegerAttr(c.attributes["value"]).value
    return (v, j)


def same_dims(cands: list) -> bool:
    """Whether the dims ``cands`` ((value, dim) pairs) are provably equal."""
    if len(cands) < 2:
        return len(cands) == 1
    first = _dim_root(*cands[0])
    return all(_dim_root(*c) == first for c in cands[1:])


def _is_sole(sole: dict, k: int, v: ir.Value, j: int) -> bool:
    """Whether the result's dim ``k`` is ``v``'s dim ``j``: ``sole[k]`` is one
    (value, dim) pair or a list of provably equal ones."""
    s = sole.get(k)
    if s is None:
        return False
    return s == (v, j) if isinstance(s, tuple) else any(c == (v, j) for c in s)


def broadcast_generic(op: OnnxOp, b: LoweringContext, inputs: list[ir.Value],
                      body, out_index: int = 0) -> ir.Value:
    """linalg.generic over op's result ``out_index`` shape; body(*scalars)."""
    out_t = b.result_type(op, out_index)
    rank = out_t.rank
    for v in inputs:
        b.ranked(op, v)
        if v.type.rank > rank:
            op.fail(f"input rank {v.type.rank} exceeds result rank {rank}")

    def cands(k):
        return [(v, k - (rank - v.type.rank)) for v in inputs
                if k - (rank - v.type.rank) >= 0 and v.type.is_dynamic_dim(k - (rank - v.type.rank))]

    def dyn(k):
        for v in inputs:
            j = k - (rank - v.type.rank)
            if j >= 0 and not v.type.is_dynamic_dim(j) and v.type.shape[j] != 1:
                return int(v.type.shape[j])
        cs = cands(k)
        if not cs:
            return 1
        d = b.dim(*cs[0])
        if same_dims(cs):
            return d
        for c in cs[1:]:
            d = broadcast_dim(d, b.dim(*c))
        return d

    dims = b.out_dims(op, out_index, dyn)
    # A dynamic input dim may be 1 at run time while the result's is not:
    # such inputs are broadcast explicitly first (a run-time branch), so the
    # generic below can index them like the result. Inputs whose dims there
    # are provably one value (SiLU's x * sigmoid(x)) are each the result's.
    sole = {k: (cands(k)[0] if len(cands(k)) == 1 else cands(k)) for k in range(rank)
            if isinstance(dims[k], ir.Value) and same_dims(cands(k))}
    _check_broadcast(op, b, inputs, dims, rank, sole)
    inputs = [runtime_broadcast(b, v, dims, rank, sole) for v in inputs]
    maps = []
    for v in inputs:
        r = v.type.rank
        exprs = []
        for j in range(r):
            k = rank - r + j
            static_one = not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
            exprs.append("0" if static_one and dims[k] != 1 else k)
        maps.append(affine_map(rank, exprs))
    maps.append(affine_map(rank, list(range(rank))))
    init = b.empty(dims, out_t.element_type)
    return b.generic(inputs, [init], maps, ["parallel"] * rank,
                     lambda *a: body(*a[:len(inputs)]))[0]


def _check_broadcast(op: OnnxOp, b: LoweringContext, inputs: list[ir.Value], dims: list,
                     rank: int, sole: dict) -> None:
    """Run-time check that every dynamic input dim is the result's or 1
    (numpy broadcasting): ``[3, 4] + [5, 4]`` fails instead of reading past
    the first input."""
    chk = checks(op, b)
    for i, v in enumerate(inputs):
        r = v.type.rank
        for j in range(r):
            k = rank - r + j
            if not v.type.is_dynamic_dim(j) or _is_sole(sole, k, v, j):
                continue
            dv, do = b.ixdim(v, j), wrap(dims[k])
            chk.require(D.either(D.eq(dv, do), D.eq(dv, 1)),
                        f"input #{i} is not broadcast-compatible: its dim {j} is {{0}}, "
                        f"the other inputs need {{1}} (or 1) on that axis", dv, do)


def runtime_broadcast(b: LoweringContext, v: ir.Value, dims: list, rank: int,
                       sole: dict) -> ir.Value:
    """``v`` broadcast at run time where a dynamic dim of it is 1 and the
    result's is not; ``sole[k] = (v, j)`` when the result dim k *is* v's dim j.
    One ``scf.if`` per operand whose then-branch copies ``v`` reading index 0
    along every dim that is 1 (a chain of one ``scf.if`` per dim made
    eliminate-empty-tensors and one-shot-bufferize exponentially slow at -O3:
    a rank-4 MatMul took 436 s to bufferize)."""
    from mlir.dialects import scf
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, loop_index
    r = v.type.rank
    js = [j for j in range(r) if v.type.is_dynamic_dim(j) and dims[rank - r + j] != 1
          and not _is_sole(sole, rank - r + j, v, j)]
    if not js:
        return v
    one = b.as_index(1)
    is_one, need = {}, None
    for j in js:
        is_one[j] = arith.cmpi(I.eq, b.dim(v, j), one)
        nj = arith.andi(is_one[j], arith.cmpi(I.ne, b.as_index(dims[rank - r + j]), one))
        need = nj if need is None else arith.ori(need, nj)
    new_dims = b.dims(v)
    for j in js:
        new_dims[j] = dims[rank - r + j]
    if_op = scf.IfOp(need, [v.type], has_else=True)
    with ir.InsertionPoint(if_op.then_block):

        def body(_o):
            idx = [loop_index(j) for j in range(r)]
            for j in js:
                idx[j] = arith.select(is_one[j], b.index(0), idx[j])
            return tensor.extract(v, idx)
        expanded = b.generic([], [b.empty(new_dims, v.type.element_type)],
                             [affine_map(r, list(range(r)))], ["parallel"] * r, body)[0]
        scf.YieldOp([b.cast_to(expanded, v.type)])
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp([v])
    # the result's dims are new_dims either way (the else branch only runs when
    # v's dims are those, see _check_broadcast): a full slice states them, so
    # a later tensor.dim of it folds to them instead of leaving bufferization's
    # value-bounds analysis to compare the two branches (codegen/resolve_dims.py)
    return extract_slice(b, if_op.results[0], [0] * r,
                         [b.as_index(d) if isinstance(d, ir.Value) else d for d in new_dims])
