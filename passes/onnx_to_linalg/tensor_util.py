"""Helpers shared by the tensor-manipulation lowerings (Concat, Slice,
Gather, Pad, Resize, reductions, ...): constant operands after lowering,
mixed static/dynamic slices, index arithmetic inside linalg bodies.

Sizes/offsets are ``int | ir.Value`` (an ``index`` Value when dynamic).
"""
from __future__ import annotations

from typing import Sequence

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.ir_dense import dense_to_numpy
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, index_t


def owner_op(v: ir.Value) -> ir.Operation | None:
    o = v.owner
    if isinstance(o, ir.OpView):
        o = o.operation
    return o if isinstance(o, ir.Operation) else None


def const_np(v: ir.Value | None) -> np.ndarray | None:
    """numpy value of a lowered operand defined by a dense ``arith.constant``."""
    if v is None:
        return None
    o = owner_op(v)
    if o is None or o.name != "arith.constant":
        return None
    a = o.attributes["value"]
    if not isinstance(a, ir.DenseElementsAttr):
        return None
    return dense_to_numpy(a)  # not np.array(a): wrong for i1 splats (see ir_dense.py)


def const_ints(op, v: ir.Value, what: str) -> list[int]:
    """Constant integer values of an operand, or a one-line error."""
    c = const_np(v)
    if c is None or c.dtype.kind not in "iub":
        op.fail(f"'{what}' must be a constant integer tensor")
    return [int(x) for x in c.reshape(-1)]


def is_empty(v: ir.Value | None) -> bool:
    """Absent optional input or a statically empty tensor."""
    if v is None:
        return True
    t = v.type
    return isinstance(t, ir.RankedTensorType) and t.has_static_shape and \
        int(np.prod(t.shape)) == 0


def norm_axis(op, a: int, r: int, what: str = "axis") -> int:
    if not -r <= a < r:
        op.fail(f"{what} {a} is out of range for rank {r}")
    return a + r if a < 0 else a


def _split_mixed(vals: Sequence) -> tuple[list[ir.Value], list[int]]:
    dyn = [v for v in vals if not isinstance(v, int)]
    static = [v if isinstance(v, int) else DYN for v in vals]
    return dyn, static


def extract_slice(b: LoweringContext, x: ir.Value, offsets: Sequence, sizes: Sequence,
                  strides: Sequence | None = None) -> ir.Value:
    strides = strides or [1] * len(sizes)
    rt = b.type_of(sizes, x.type.element_type)
    if 0 in sizes or 0 in list(x.type.shape):
        # empty (a size of 0, or a source with a static dim of 0, whose slice
        # sizes only the run time knows: Split of a [0] tensor by a split
        # input): MLIR's slice verifier rejects any static offset into a 0 dim
        return tensor.empty(list(sizes), x.type.element_type)
    (do, so), (dz, sz), (ds, ss) = (_split_mixed(offsets), _split_mixed(sizes),
                                    _split_mixed(strides))
    return tensor.extract_slice(rt, x, do, dz, ds, so, sz, ss)


def insert_slice(src: ir.Value, dst: ir.Value, offsets: Sequence, sizes: Sequence,
                 strides: Sequence | None = None) -> ir.Value:
    strides = strides or [1] * len(sizes)
    if 0 in sizes or 0 in list(dst.type.shape):
        return dst          # nothing to insert (and a static offset 0 into 0 fails to verify)
    (do, so), (dz, sz), (ds, ss) = (_split_mixed(offsets), _split_mixed(sizes),
                                    _split_mixed(strides))
    return tensor.insert_slice(src, dst, do, dz, ds, so, sz, ss)


# -- index arithmetic (folds when both sides are Python ints) ---------------------
def iadd(b: LoweringContext, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    return arith.addi(b.as_index(x), b.as_index(y))


def isub(b: LoweringContext, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x - y
    return arith.subi(b.as_index(x), b.as_index(y))


def imul(b: LoweringContext, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    if isinstance(y, int) and y == 1:
        return x
    if isinstance(x, int) and x == 1:
        return y
    return arith.muli(b.as_index(x), b.as_index(y))


def imax(b: LoweringContext, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return max(x, y)
    return arith.maxsi(b.as_index(x), b.as_index(y))


def imin(b: LoweringContext, x, y):
    if isinstance(x, int) and isinstance(y, int):
        return min(x, y)
    return arith.minsi(b.as_index(x), b.as_index(y))


def loop_index(k: int) -> ir.Value:
    """linalg.index k (inside a linalg.generic body)."""
    return linalg.IndexOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)).result


def to_index(v: ir.Value) -> ir.Value:
    """Integer scalar -> index."""
    if isinstance(v.type, ir.IndexType):
        return v
    return arith.index_cast(index_t(), v)


def from_index(v: ir.Value, et: ir.Type) -> ir.Value:
    return arith.index_cast(et, v)


def scalar_of(b: LoweringContext, v: ir.Value) -> ir.Value:
    """The one element of a 0-D or 1-element tensor."""
    r = v.type.rank
    return tensor.extract(v, [b.index(0)] * r)


def elem_index(b: LoweringContext, v: ir.Value, k: int) -> ir.Value:
    """Element k of a 1-D integer tensor as an index Value."""
    return to_index(tensor.extract(v, [b.index(k)]))


def per_dim_entries(b: LoweringContext, chk, r: int, n, axes: ir.Value | None,
                    values, defaults: list[list]) -> list[list]:
    """Parameters per dim when the axes are known only at run time.

    Entry j (of ``n``, int or index Value) names dim ``axes[j]`` (``j``
    when ``axes`` is None; negative axes count from the end) and gives
    ``values(j) -> [dims]``; an scf.for picks, for every dim d, the values
    of the entry naming d (``defaults[d]`` when none does). Run-time checks
    (``chk``: ``dims_ir.checks``): every axis in range, no dim named twice.
    Returns ``[[dims] per dim]`` (shape-helper dims)."""
    from onnx_mlir_py.dialects.onnx import dims as D
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal, index_of
    from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
    k = len(defaults[0])

    def idx(v):
        return b.index(v) if isinstance(v, int) else index_of(v)
    inits = []
    for d in range(r):
        inits += [idx(v) for v in defaults[d]] + [b.index(0)]

    def body(ivs, carried):
        j = ivs[0]
        a = IxVal(to_index(tensor.extract(axes, [j]))) if axes is not None else IxVal(j)
        chk.require(D.both(D.ge(a, -r), D.lt(a, r)),
                    f"axes entry {{0}} is out of range for rank {r}", a)
        a = D.select(D.lt(a, 0), a + r, a)
        vals = values(j)
        out = []
        for d in range(r):
            hit = D.eq(a, d)
            cur = [IxVal(v) for v in carried[(k + 1) * d:(k + 1) * (d + 1)]]
            out += [D.select(hit, v, c) for v, c in zip(vals, cur[:k])]
            out.append(cur[k] + D.select(hit, 1, 0))
        return [idx(v) for v in out]
    res = for_nest(b, [n if isinstance(n, int) else index_of(n)], inits, body)
    params = []
    for d in range(r):
        got = [IxVal(v) for v in res[(k + 1) * d:(k + 1) * (d + 1)]]
        chk.require(D.le(got[k], 1), f"axes name dim {d} {{0}} times", got[k])
        params.append(got[:k])
    return params


def ix_elems(b: LoweringContext, v: ir.Value, n: int) -> list:
    """The n elements of a 1-D integer tensor for a shape helper: ints if
    it is a constant, else run-time index values (``tensor.extract``)."""
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal
    c = const_np(v)
    if c is not None:
        if c.dtype.kind not in "iu":
            raise TypeError("not an integer tensor")
        return [int(x) for x in c.reshape(-1)]
    return [IxVal(to_index(tensor.extract(v, [b.index(j)]))) for j in range(n)]


def ix_elem(v: ir.Value, j) -> object:
    """Element j (index Value) of a 1-D integer tensor as a run-time dim."""
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal
    return IxVal(to_index(tensor.extract(v, [j])))
