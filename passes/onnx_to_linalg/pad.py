"""Pad with constant pads (attribute in v2, constant input from v11; v18+
``axes``). Negative pads crop first (tensor.extract_slice). ``constant``
mode is a tensor.pad (its value may be a run-time scalar); ``edge``,
``reflect`` and ``wrap`` are a linalg.generic over the result reading
``tensor.extract`` at the clamped / mirrored / wrapped source index.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import DYN, LoweringContext, affine_map, index_t
from .tensor_util import (const_ints, extract_slice, iadd, is_empty, isub, loop_index,
                          norm_axis, scalar_of)

I = arith.CmpIPredicate


def _pads(op: OnnxOp, r: int) -> tuple[list[int], list[int]]:
    if op.version == 2:
        pads = list(op.attrs.pads)
    else:
        pads = const_ints(op, op.input(1), "pads")
    axes = list(range(r))
    if op.version >= 18 and op.input(3) is not None and not is_empty(op.input(3)):
        axes = [norm_axis(op, a, r, "axes") for a in const_ints(op, op.input(3), "axes")]
    if len(pads) != 2 * len(axes):
        op.fail(f"pads has {len(pads)} entries, expected {2 * len(axes)}")
    lo, hi = [0] * r, [0] * r
    for j, a in enumerate(axes):
        lo[a], hi[a] = pads[j], pads[j + len(axes)]
    return lo, hi


def _value(op: OnnxOp, b: LoweringContext, et: ir.Type):
    if op.version == 2:
        return b.const(op.attrs.value, et)
    v = op.input(2)
    if v is None or is_empty(v):
        return b.const(0, et)
    return scalar_of(b, v)


def _const_pad(b: LoweringContext, x, lo, hi, value) -> ir.Value:
    t = x.type
    shape = [DYN if t.is_dynamic_dim(i) else t.shape[i] + lo[i] + hi[i] for i in range(t.rank)]
    rt = ir.RankedTensorType.get(shape, t.element_type)
    p = tensor.PadOp(rt, x, [], [], ir.DenseI64ArrayAttr.get(lo), ir.DenseI64ArrayAttr.get(hi))
    blk = p.regions[0].blocks.append(*[index_t()] * t.rank)
    with ir.InsertionPoint(blk):
        tensor.YieldOp(value)
    return p.result


def _source_index(b: LoweringContext, i, lo: int, d, mode: str):
    """Source index on one axis for result index i (index Values)."""
    j = arith.subi(i, b.index(lo)) if lo else i
    d = b.as_index(d)
    zero, one = b.index(0), b.index(1)
    last = arith.subi(d, one)
    if mode == "edge":
        return arith.minsi(arith.maxsi(j, zero), last)
    if mode == "wrap":
        m = arith.remsi(j, d)
        return arith.select(arith.cmpi(I.slt, m, zero), arith.addi(m, d), m)
    # reflect (pads smaller than the dim): -j below, 2*(d-1)-j above
    j = arith.select(arith.cmpi(I.slt, j, zero), arith.subi(zero, j), j)
    return arith.select(arith.cmpi(I.sgt, j, last), arith.subi(arith.addi(last, last), j), j)


@lowering("Pad", 2, 11, 13, 18, 19, 21, 23, 24, 25)
def lower_pad(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    lo, hi = _pads(op, r)
    mode = op.attrs.mode
    if mode not in ("constant", "edge", "reflect", "wrap"):
        op.fail(f"mode '{mode}' is not supported")
    # negative pads crop
    if any(p < 0 for p in lo + hi):
        dims = b.dims(x)
        offs = [max(-p, 0) for p in lo]
        sizes = [isub(b, isub(b, dims[k], offs[k]), max(-hi[k], 0)) for k in range(r)]
        x = extract_slice(b, x, offs, sizes)
        lo, hi = [max(p, 0) for p in lo], [max(p, 0) for p in hi]
    if not any(lo) and not any(hi):
        return [x]
    if mode == "constant":
        return [_const_pad(b, x, lo, hi, _value(op, b, et))]
    dims = b.dims(x)
    if mode == "reflect":
        for k in range(r):
            if isinstance(dims[k], int) and (lo[k] or hi[k]) and \
                    max(lo[k], hi[k]) >= dims[k]:
                op.fail(f"reflect pads {lo[k]},{hi[k]} must be smaller than dim {k} "
                        f"({dims[k]})")
    if mode in ("edge", "wrap", "reflect"):
        for k in range(r):
            if isinstance(dims[k], int) and dims[k] == 0 and (lo[k] or hi[k]):
                op.fail(f"cannot pad the empty dim {k} in '{mode}' mode")
    out = [iadd(b, iadd(b, dims[k], lo[k]), hi[k]) for k in range(r)]

    def body(_o):
        idx = []
        for k in range(r):
            i = loop_index(k)
            idx.append(_source_index(b, i, lo[k], dims[k], mode) if (lo[k] or hi[k]) else i)
        return tensor.extract(x, idx)
    return [b.generic([], [b.empty(out, et)], [affine_map(r, list(range(r)))],
                      ["parallel"] * r, body)[0]]
