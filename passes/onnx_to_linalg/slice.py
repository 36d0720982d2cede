"""Slice -> tensor.extract_slice (+ a linalg.generic for other steps).

Per dim, (start, end, step) is gathered from the operands: constants as
ints, run-time elements as index values (``tensor.extract``); with
run-time ``axes``, or a number of axes known only at run time, an scf.for
over the entries picks each dim's parameters. ``slice_axis`` (the shape
helper shared with the shape rule) then gives each dim's first element
and count. Axes with a static positive step are a strided
``tensor.extract_slice``; negative or run-time steps are a linalg.generic
reading ``x[first + i * step]``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.slice import SLICE, slice_axis
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal, checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (const_np, extract_slice, ix_elem,
                                                            ix_elems, loop_index, norm_axis,
                                                            per_dim_entries)


def _operands(op: OnnxOp):
    if op.version == 1:
        return None, None, None, None
    return op.input(1), op.input(2), op.input(3), op.input(4)


def _static_params(op: OnnxOp, b: LoweringContext, r: int, chk) -> dict | None:
    """{dim: (start, end, step)} when the sliced axes are known at compile
    time; None when they are not (run-time axes or number of entries)."""
    if op.version == 1:
        starts, ends = list(op.attrs.starts), list(op.attrs.ends)
        axes, steps = op.attrs.axes, None
        n = len(starts)
        if len(ends) != n or (axes is not None and len(axes) != n):
            op.fail("starts, ends and axes must have the same length")
    else:
        vs, ve, va, vst = _operands(op)
        axes = None
        if va is not None:
            c = const_np(va)
            if c is None:
                return None
            axes = [int(x) for x in c.reshape(-1)]
        ops = [v for v in (vs, ve, va, vst) if v is not None]
        lens = [v.type.shape[0] for v in ops if not v.type.is_dynamic_dim(0)]
        if len(set(lens)) > 1:
            op.fail("starts, ends, axes and steps must have the same length")
        if not lens:
            return None
        n = lens[0]
        for v in ops:  # a run-time length must be the same
            if v.type.is_dynamic_dim(0):
                chk.require(D.eq(b.ixdim(v, 0), n),
                            "starts, ends, axes and steps have {0} and {1} entries",
                            b.ixdim(v, 0), n)
        try:
            starts, ends = ix_elems(b, vs, n), ix_elems(b, ve, n)
            steps = ix_elems(b, vst, n) if vst is not None else None
        except TypeError:
            op.fail("starts, ends and steps must be integer tensors")
    axes = list(range(n)) if axes is None else [norm_axis(op, a, r, "axes") for a in axes]
    if len(set(axes)) != len(axes):
        op.fail(f"axes {axes} has duplicates")
    steps = steps or [1] * n
    return {a: (starts[j], ends[j], steps[j]) for j, a in enumerate(axes)}


def _runtime_params(op: OnnxOp, b: LoweringContext, x, r: int, chk) -> dict:
    """{dim: (start, end, step)} for every dim, chosen at run time (axes or
    their number known only at run time)."""
    vs, ve, va, vst = _operands(op)
    n = b.ixdim(vs, 0)
    for v in (ve, va, vst):
        if v is not None:
            chk.require(D.eq(b.ixdim(v, 0), n),
                        "starts, ends, axes and steps have {0} and {1} entries",
                        b.ixdim(v, 0), n)

    def values(j):
        return [ix_elem(vs, j), ix_elem(ve, j), ix_elem(vst, j) if vst is not None else 1]
    got = per_dim_entries(b, chk, r, n, va, values,
                          [[0, b.ixdim(x, d), 1] for d in range(r)])
    return dict(enumerate(tuple(p) for p in got))


def slice_tensor(b: LoweringContext, x, params: dict, chk, out_type) -> ir.Value:
    """x sliced by {dim: (start, end, step)} (ints or run-time values)."""
    r = x.type.rank
    dims = b.ixdims(x)
    offs, sizes, strides = [0] * r, [index_of(d) for d in dims], [1] * r
    gathered = {}   # dim -> (first, step): read by the generic
    for a, (s, e, st) in sorted(params.items()):
        first, cnt = slice_axis(chk, dims[a], s, e, st)
        cnt = out_type.shape[a] if not out_type.is_dynamic_dim(a) else index_of(cnt)
        if D.is_static(st) and st > 0:
            offs[a], sizes[a], strides[a] = index_of(first), cnt, st
        else:
            sizes[a] = cnt
            gathered[a] = (first, st)
    if 0 in [d for d in sizes if isinstance(d, int)]:  # (a static offset must be < dim)
        return b.cast_to(b.empty(sizes, x.type.element_type), out_type)
    if len(gathered) < len(params):
        x = extract_slice(b, x, offs, [sizes[a] if a not in gathered else index_of(dims[a])
                                       for a in range(r)], strides)
    if gathered:
        x = _gather(b, x, sizes, gathered)
    return b.cast_to(x, out_type)


def _gather(b: LoweringContext, x, sizes, gathered: dict) -> ir.Value:
    """result[i] = x[.., first + i_a * step, ..] on the ``gathered`` axes."""
    r = x.type.rank
    init = b.empty(sizes, x.type.element_type)

    def body(_o):
        idx = []
        for k in range(r):
            i = loop_index(k)
            if k in gathered:
                first, st = gathered[k]
                i = IxVal(i) * st + first
                i = index_of(i) if not isinstance(i, int) else b.index(i)
            idx.append(i)
        return tensor.extract(x, idx)
    return b.generic([], [init], [affine_map(r, list(range(r)))], ["parallel"] * r, body)[0]


@lowering("Slice", *SLICE)
def lower_slice(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    chk = checks(op, b)
    params = _static_params(op, b, r, chk)
    if params is None:
        params = _runtime_params(op, b, x, r, chk)
    return [slice_tensor(b, x, params, chk, b.result_type(op))]
