"""MaxPool / AveragePool (2-D, NCHW) -> linalg.pooling_nchw_max / _sum;
GlobalAveragePool / GlobalMaxPool -> linalg.generic reductions.

Padding is explicit (tensor.pad with -inf / 0); ceil_mode adds end padding.
AveragePool divisors (count_include_pad, ceil_mode) are a constant computed
at compile time from the static spatial shape.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, linalg

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float, lowest, pad
from .conv import spatial_params


def _has(op: OnnxOp, name: str) -> bool:
    return name in op.spec.attributes


def _pool_setup(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 4:
        op.fail("only 2-D pooling (NCHW) is supported")
    if len(op.op.results) > 1 and len(list(op.op.results[1].uses)):
        op.fail("the Indices output is not supported")
    xs = op.shape(x)
    if xs[2] is None or xs[3] is None:
        op.fail("spatial dims must be static")
    kernel = op.attrs.kernel_shape
    if len(kernel) != 2:
        op.fail("kernel_shape must have 2 entries")
    pb, pe, strides, dil = spatial_params(op, xs[2:], kernel, 2, _has(op, "dilations"))
    ceil = _has(op, "ceil_mode") and op.attrs.ceil_mode
    out_t = b.result_type(op)
    osz = []
    extra = []
    for i in range(2):
        full = xs[2 + i] + pb[i] + pe[i] - ((kernel[i] - 1) * dil[i] + 1)
        o = (-(-full // strides[i]) if ceil else full // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= xs[2 + i] + pb[i]:
            o -= 1  # the last window must start inside the input or left padding
        if not out_t.is_dynamic_dim(2 + i) and out_t.shape[2 + i] != o:
            op.fail(f"computed output size {o} differs from the result type {out_t}")
        need = (o - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - (xs[2 + i] + pb[i] + pe[i])
        extra.append(max(0, need))
        osz.append(o)
    out_dims = [b.dim(x, 0), b.dim(x, 1)] + osz
    return x, xs, kernel, pb, pe, strides, dil, extra, out_dims


def _window(b: LoweringContext, kernel, et):
    return b.empty(list(kernel), et)


@lowering("MaxPool", 1, 8, 10, 11, 12, 22)
def lower_max_pool(op: OnnxOp, b: LoweringContext):
    x, xs, kernel, pb, pe, strides, dil, extra, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    xp = pad(b, x, [0, 0] + pb, [0, 0, pe[0] + extra[0], pe[1] + extra[1]], lowest(et))
    init = b.full(out_dims, et, lowest(et))
    y = linalg.pooling_nchw_max(xp, _window(b, kernel, et), outs=[init],
                                strides=strides, dilations=dil)
    res = [y]
    if len(op.op.results) > 1:  # unused Indices: give it a value of the right type
        t = b.result_type(op, 1)
        res.append(b.full(out_dims, t.element_type, 0))
    return res


@lowering("AveragePool", 1, 7, 10, 11, 19, 22)
def lower_average_pool(op: OnnxOp, b: LoweringContext):
    x, xs, kernel, pb, pe, strides, dil, extra, out_dims = _pool_setup(op, b)
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float AveragePool is supported")
    xp = pad(b, x, [0, 0] + pb, [0, 0, pe[0] + extra[0], pe[1] + extra[1]], 0.0)
    init = b.full(out_dims, et, 0.0)
    s = linalg.pooling_nchw_sum(xp, _window(b, kernel, et), outs=[init],
                                strides=strides, dilations=dil)
    # divisor per output position (compile time)
    include = _has(op, "count_include_pad") and op.attrs.count_include_pad
    h, w = xs[2], xs[3]
    ones = np.zeros((h + pb[0] + pe[0] + extra[0], w + pb[1] + pe[1] + extra[1]), np.float64)
    if include:
        ones[:h + pb[0] + pe[0], :w + pb[1] + pe[1]] = 1
    else:
        ones[pb[0]:pb[0] + h, pb[1]:pb[1] + w] = 1
    cnt = np.zeros(out_dims[2:], np.float64)
    for i in range(out_dims[2]):
        for j in range(out_dims[3]):
            r = ones[i * strides[0]: i * strides[0] + (kernel[0] - 1) * dil[0] + 1: dil[0],
                     j * strides[1]: j * strides[1] + (kernel[1] - 1) * dil[1] + 1: dil[1]]
            cnt[i, j] = r.sum()
    np_dt = {"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(str(et))
    if np_dt is None:
        op.fail(f"AveragePool on {et} is not supported")
    ctype = ir.RankedTensorType.get(list(cnt.shape), et)
    if np.all(cnt == cnt.flat[0]):
        d = b.const(float(cnt.flat[0]), et)
        return [b.map_elementwise([s], out_dims, et, lambda v: arith.divf(v, d))]
    c = arith.constant(ctype, ir.DenseElementsAttr.get(np.ascontiguousarray(cnt.astype(np_dt)),
                                                       type=ctype))
    res = b.empty(out_dims, et)
    return b.generic([s, c], [res], [affine_map(4, [0, 1, 2, 3]), affine_map(4, [2, 3]),
                                     affine_map(4, [0, 1, 2, 3])],
                     ["parallel"] * 4, lambda v, n, _o: arith.divf(v, n))


def _global(op: OnnxOp, b: LoweringContext, kind: str):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if r < 3:
        op.fail("input must have rank >= 3")
    et = x.type.element_type
    if not is_float(et):
        op.fail("only float global pooling is supported")
    dims = b.dims(x)
    out_dims = dims[:2] + [1] * (r - 2)
    init = b.full(out_dims, et, 0.0 if kind == "avg" else float("-inf"))
    in_map = affine_map(r, list(range(r)))
    out_map = affine_map(r, [0, 1] + ["0"] * (r - 2))
    red = b.generic([x], [init], [in_map, out_map], ["parallel"] * 2 + ["reduction"] * (r - 2),
                    lambda v, acc: arith.addf(acc, v) if kind == "avg"
                    else arith.maximumf(acc, v))[0]
    if kind == "max":
        return [red]
    n = None
    static = 1
    for d in dims[2:]:
        if isinstance(d, int):
            static *= d
        else:
            n = d if n is None else arith.muli(n, d)
    if n is None:
        cnt = b.const(float(static), et)
    else:
        if static != 1:
            n = arith.muli(n, b.index(static))
        cnt = arith.uitofp(et, arith.index_cast(ir.IntegerType.get_signless(64), n))
    return [b.map_elementwise([red], out_dims, et, lambda v: arith.divf(v, cnt))]


@lowering("GlobalAveragePool", 1, 22)
def lower_global_average_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "avg")


@lowering("GlobalMaxPool", 1, 22)
def lower_global_max_pool(op: OnnxOp, b: LoweringContext):
    return _global(op, b, "max")
