"""Pad (attribute pads in v2, a ``pads`` input from v11, ``axes`` from v18),
pads constant or known only at run time.

Per dim, (begin, end) comes from the operands (constants as ints, run-time
elements as index values; run-time axes: an scf.for picks each dim's
entry), then ``pad_axis`` (the shape helper shared with the shape rule)
gives the crop, the pads and the result dim, with run-time checks. Negative
pads crop first (tensor.extract_slice). ``constant`` mode is a tensor.pad
(its value may be a run-time scalar); ``edge``, ``reflect`` and ``wrap``
are a linalg.generic over the result reading ``tensor.extract`` at the
clamped / mirrored / wrapped source index.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.pad import MODES, PAD, pad_axis
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import DYN, LoweringContext, affine_map, index_t
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal, checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (const_np, extract_slice, is_empty,
                                                            ix_elem, ix_elems, loop_index,
                                                            norm_axis, per_dim_entries, scalar_of)


def _pads(op: OnnxOp, b: LoweringContext, x, r: int, chk) -> list[tuple]:
    """[(begin, end) per dim] (ints or run-time values)."""
    if op.version == 2:
        pads, axes, n = list(op.attrs.pads), list(range(r)), r
    else:
        vp = op.input(1)
        va = op.input(3) if op.version >= 18 and not is_empty(op.input(3)) else None
        if va is not None and const_np(va) is None:
            n = b.ixdim(va, 0)
            chk.require(D.eq(b.ixdim(vp, 0), 2 * n),
                        "pads has {0} entries for {1} axes", b.ixdim(vp, 0), n)
            got = per_dim_entries(b, chk, r, n, va,
                                  lambda j: [ix_elem(vp, j), ix_elem(vp, index_of(IxVal(j) + n))],
                                  [[0, 0]] * r)
            return [tuple(p) for p in got]
        axes = list(range(r)) if va is None else \
            [norm_axis(op, int(a), r, "axes") for a in const_np(va).reshape(-1)]
        if len(set(axes)) != len(axes):
            op.fail(f"axes {axes} has duplicates")
        n = len(axes)
        chk.require(D.eq(b.ixdim(vp, 0), 2 * n), "pads has {0} entries for {1} axes",
                    b.ixdim(vp, 0), n)
        try:
            pads = ix_elems(b, vp, 2 * n)
        except TypeError:
            op.fail("pads must be an integer tensor")
    if len(pads) != 2 * n:
        op.fail(f"pads has {len(pads)} entries, expected {2 * n}")
    out = [(0, 0)] * r
    for j, a in enumerate(axes):
        out[a] = (pads[j], pads[j + n])
    return out


def _value(op: OnnxOp, b: LoweringContext, et: ir.Type):
    if op.version == 2:
        return b.const(op.attrs.value, et)
    v = op.input(2)
    if v is None or is_empty(v):
        return b.const(0, et)
    return scalar_of(b, v)


def _const_pad(x, lo, hi, value, out_type) -> ir.Value:
    t = x.type
    shape = [DYN if not (D.is_static(lo[i]) and D.is_static(hi[i]) and
                         not t.is_dynamic_dim(i)) else t.shape[i] + lo[i] + hi[i]
             for i in range(t.rank)]
    rt = ir.RankedTensorType.get(shape, t.element_type)
    dyn_lo = [index_of(v) for v in lo if not D.is_static(v)]
    dyn_hi = [index_of(v) for v in hi if not D.is_static(v)]
    st = [[v if D.is_static(v) else DYN for v in p] for p in (lo, hi)]
    p = tensor.PadOp(rt, x, dyn_lo, dyn_hi, ir.DenseI64ArrayAttr.get(st[0]),
                     ir.DenseI64ArrayAttr.get(st[1]))
    blk = p.regions[0].blocks.append(*[index_t()] * t.rank)
    with ir.InsertionPoint(blk):
        tensor.YieldOp(value)
    return p.result


def _source_index(i: IxVal, lo, d, mode: str):
    """Source index on one axis for result index i (dims algebra)."""
    j = i - lo
    if mode == "edge":
        return D.dmin(D.dmax(j, 0), d - 1)
    if mode == "wrap":
        m = j % d
        return D.select(D.lt(m, 0), m + d, m)
    # reflect (pads smaller than the dim): -j below, 2*(d-1)-j above
    j = D.select(D.lt(j, 0), 0 - j, j)
    return D.select(D.gt(j, d - 1), 2 * (d - 1) - j, j)


@lowering("Pad", *PAD)
def lower_pad(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    mode = op.attrs.mode
    if mode not in MODES:
        op.fail(f"mode '{mode}' is not supported")
    chk = checks(op, b)
    dims = b.ixdims(x)
    pads = _pads(op, b, x, r, chk)
    axes = [pad_axis(chk, dims[k], bg, en, mode, k) for k, (bg, en) in enumerate(pads)]
    out_t = b.result_type(op)
    crop, kept, lo, hi, out = (list(v) for v in zip(*axes))
    # a negative begin or end pad (or one known only at run time) may crop
    if any(not (D.is_static(p) and p >= 0) for p in sum(pads, ())):
        # a crop to nothing starts at 0: a size-0 slice at offset == dim fails
        # MLIR's slice verifier once folding makes both static
        starts = [D.select(D.eq(k, 0), 0, c) for c, k in zip(crop, kept)]
        x = extract_slice(b, x, [index_of(c) for c in starts], [index_of(v) for v in kept])
    if all(D.is_static(v) and v == 0 for v in lo + hi):
        return [b.cast_to(x, out_t)]
    if mode == "constant" and 0 in list(x.type.shape):
        # an empty source: the result is all padding (tensor.pad of it
        # bufferizes to a 0-size subview that fails to verify)
        out_dims = [out_t.shape[k] if not out_t.is_dynamic_dim(k) else index_of(out[k])
                    for k in range(r)]
        return [linalg.fill(_value(op, b, et), outs=[b.empty(out_dims, et)])]
    if mode == "constant":
        return [b.cast_to(_const_pad(x, lo, hi, _value(op, b, et), out_t), out_t)]
    out_dims = [out_t.shape[k] if not out_t.is_dynamic_dim(k) else index_of(out[k])
                for k in range(r)]

    def body(_o):
        idx = []
        for k in range(r):
            i = loop_index(k)
            if not (D.is_static(lo[k]) and D.is_static(hi[k]) and lo[k] == hi[k] == 0):
                i = index_of(_source_index(IxVal(i), lo[k], kept[k], mode))
            idx.append(i)
        return tensor.extract(x, idx)
    return [b.generic([], [b.empty(out_dims, et)], [affine_map(r, list(range(r)))],
                      ["parallel"] * r, body)[0]]
