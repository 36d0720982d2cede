"""Concat -> tensor.empty + one tensor.insert_slice per input; Split ->
tensor.extract_slice per output (sizes from the ``split`` attribute/input,
``num_outputs`` or equal parts; dynamic dims from ``tensor.dim``)."""
from __future__ import annotations

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.ops.concat_split import SPLIT, split_sizes
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, iadd, insert_slice,
                                                            ix_elems, norm_axis)


@lowering("Concat", 4, 11, 13)
def lower_concat(op: OnnxOp, b: LoweringContext):
    ins = op.variadic()
    for v in ins:
        b.ranked(op, v)
    r = ins[0].type.rank
    axis = norm_axis(op, op.attrs.axis, r)
    return [concat_values(op, b, ins, axis)]


def concat_values(op: OnnxOp, b: LoweringContext, ins: list, axis: int):
    """``ins`` (ranked, of one rank) concatenated along ``axis`` (in range)
    into a tensor of op's result type (also QLinearConcat's, qlinear.py)."""
    r = ins[0].type.rank
    # skip inputs statically empty along axis
    live = [v for v in ins if v.type.is_dynamic_dim(axis) or v.type.shape[axis] != 0]
    t = b.result_type(op)
    if len(live) == 1:
        return live[0]
    # the output's other dims from the live inputs, or from all of them when
    # every input is empty along the axis (fuzz case s3113-35: [1, 0, n, 1]
    # twice, whose dynamic n the empty result must still be given)
    srcs = live or ins

    def dyn(k):
        if k == axis:
            tot = 0
            for v in live:
                tot = iadd(b, tot, b.dim(v, axis))
            return b.as_index(tot) if live else 0
        for v in srcs:
            if not v.type.is_dynamic_dim(k):
                return int(v.type.shape[k])
        return b.dim(srcs[0], k)
    out_dims = b.out_dims(op, 0, dyn)
    if not live:
        return b.empty(out_dims, t.element_type)
    _check_concat(op, b, ins, live, axis, out_dims)
    acc = b.empty(out_dims, t.element_type)
    off = 0
    for v in live:
        sizes = b.dims(v)
        offs = [0] * r
        offs[axis] = off
        acc = insert_slice(v, acc, [b.as_index(o) if not isinstance(o, int) else o
                                    for o in offs], sizes)
        off = iadd(b, off, sizes[axis])
    return acc


def _check_concat(op: OnnxOp, b: LoweringContext, ins: list, live: list, axis: int,
                  out_dims: list) -> None:
    """Every input's non-axis dims are the result's (each input is inserted
    with its own sizes into the result)."""
    chk = checks(op, b)
    for v in live:
        i = ins.index(v)
        for k in range(v.type.rank):
            if k == axis or not v.type.is_dynamic_dim(k) and isinstance(out_dims[k], int):
                continue
            if v is live[0] and not isinstance(out_dims[k], int):
                continue          # the result's dim is this input's
            dv, do = b.ixdim(v, k), wrap(out_dims[k])
            chk.require(D.eq(dv, do), f"input #{i} dim {k} is {{0}} but the other inputs' "
                        f"is {{1}} (only dim {axis}, the axis, may differ)", dv, do)


def _split_sizes(op: OnnxOp, b: LoweringContext, x, axis: int, chk) -> list:
    n = len(op.results)
    split = None
    if op.version < 13:
        split = op.attrs.split
    elif op.input(1) is not None:
        v = op.input(1)
        chk.require(D.eq(b.ixdim(v, 0), n), f"split has {{0}} entries for {n} outputs",
                    b.ixdim(v, 0))
        try:
            split = ix_elems(b, v, n)
        except TypeError:
            op.fail("split must be an integer tensor")
    if split is not None and len(split) != n:
        op.fail(f"split {split} has {len(split)} entries for {n} outputs")
    num = op.version >= 18 and op.attrs.num_outputs is not None
    return split_sizes(chk, b.ixdim(x, axis), split, n, num, axis)


@lowering("Split", *SPLIT)
def lower_split(op: OnnxOp, b: LoweringContext):
    """Each result is an extract_slice at the running offset; sizes from
    ``split_sizes`` (shared with the shape rule), checked at run time."""
    x = op.input(0)
    r = b.ranked(op, x).rank
    axis = norm_axis(op, op.attrs.axis, r)
    chk = checks(op, b)
    sizes = _split_sizes(op, b, x, axis, chk)
    dims = b.dims(x)
    outs, off = [], 0
    for i, sz in enumerate(sizes):
        t = b.result_type(op, i)
        offs = [0] * r
        offs[axis] = index_of(off)
        shp = list(dims)
        shp[axis] = t.shape[axis] if not t.is_dynamic_dim(axis) else index_of(sz)
        if 0 in [d for d in shp if isinstance(d, int)]:  # (a static offset must be < dim)
            outs.append(b.cast_to(b.empty(shp, t.element_type), t))
        else:
            outs.append(b.cast_to(extract_slice(b, x, offs, shp), t))
        off = off + sz
    return outs
