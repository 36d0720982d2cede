"""SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft) and
SimplifiedLayerNormalization (onnxruntime's, default domain) -> linalg.

Built on the normalization lowerings' helpers (``normalization.moments``:
two-pass mean / variance or the mean of squares over the normalized dims)
and numpy broadcasting (``broadcast.runtime_broadcast``: a dynamic dim that
is 1 at run time). Statistics are computed in f32 for f16 / bf16 inputs,
as onnxruntime's CPU kernels do (in f64 for an f64 SimplifiedLayerNormalization).

Skip ops:  s = input + skip (+ bias)                 (one generic, f32)
           mean, var = moments(s) over the last dim  (var: mean of squares
                                                      for the simplified op)
           inv = rsqrt(var + epsilon)
           output = (s - mean) * inv * gamma (+ beta) (s * inv * gamma)
Results: output, mean (zeros for the simplified op, as onnxruntime writes
it), inv_std_var ([..., 1], f32) and input_skip_bias_sum (s, rounded to the
input type), each only if the model uses it.

SimplifiedLayerNormalization: Y = X * rsqrt(mean(X^2) + epsilon) * scale over
dims axis..rank-1 (scale broadcast to X); inv_std_var has the normalized
dims 1.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_normalization import (MS, SKIP_OPS, simplified_checks,
                                                              skip_checks, skip_params)
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.normalization import moments
from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to


def _to(v: ir.Value, t: ir.Type) -> ir.Value:
    if v.type == t:
        return v
    return arith.extf(t, v) if t.width > v.type.width else arith.truncf(t, v)


def _bcast_map(v: ir.Value, dims: list, r: int) -> ir.AffineMap:
    """``v`` right-aligned on an iteration of rank ``r`` over ``dims``: a
    static 1 against a dim that is not reads index 0."""
    vr = v.type.rank
    ex = []
    for j in range(vr):
        k = r - vr + j
        one = not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
        ex.append("0" if one and dims[k] != 1 else k)
    return affine_map(r, ex)


def _stat_result(op: OnnxOp, b: LoweringContext, v: ir.Value, i: int, stat_dims: list):
    """A statistic over the kept dims -> result ``i`` (f32, unit normalized dims)."""
    rt = b.result_type(op, i)
    if v.type.element_type != rt.element_type:
        v = b.map_elementwise([v], b.dims(v), rt.element_type,
                              lambda a: _to(a, rt.element_type))
    return b.cast_to(reshape_to(op, b, v, stat_dims), rt)


def lower_skip_layer_norm(op: OnnxOp, b: LoweringContext):
    simplified = op.op_type == "SkipSimplifiedLayerNormalization"
    x, sk = op.input(0), op.input(1)
    r, sr = b.ranked(op, x).rank, b.ranked(op, sk, "skip").rank
    if r not in (2, 3) or sr not in (2, 3) or sr > r or (r == 2 and sr != 2):
        op.fail(f"input and skip must be [B, S, H] or [T, H] with skip of input's shape, "
                f"[1, S, H] or [S, H]; got {x.type} and {sk.type}")
    et = x.type.element_type
    if not isinstance(et, (ir.F32Type, ir.F16Type, ir.BF16Type)):
        op.fail(f"input must be f32, f16 or bf16, got {x.type}")
    ct = ir.F32Type.get()
    params = dict(skip_params(op))
    for name, v in params.items():
        if v is not None and b.ranked(op, v, name).rank != 1:
            op.fail(f"input '{name}' must be 1-D (hidden size), got {v.type}")
    skip_checks(checks(op, b), b.ixdims(x), b.ixdims(sk),
                [(n, b.ixdim(v, 0)) for n, v in params.items() if v is not None])
    dims = b.dims(x)
    # skip's dims other than a 3-D skip's batch are input's (checked above)
    sole = {r - sr + j: (sk, j) for j in range(sr) if not (sr == 3 and j == 0)}
    sk = runtime_broadcast(b, sk, dims, r, sole)
    full, vec = affine_map(r, list(range(r))), affine_map(r, [r - 1])
    gamma, beta, bias = params["gamma"], params.get("beta"), params["bias"]

    def add(xv, sv, *rest):
        s = arith.addf(_to(xv, ct), _to(sv, ct))
        return arith.addf(s, _to(rest[0], ct)) if bias is not None else s
    ins = [x, sk] + ([bias] if bias is not None else [])
    maps = [full, _bcast_map(sk, dims, r)] + ([vec] if bias is not None else [])
    s = b.generic(ins, [b.empty(dims, ct)], maps + [full], ["parallel"] * r,
                  lambda *a: add(*a[:-1]))[0]

    red = [r - 1]
    mean, var = moments(b, s, red, squares_only=simplified)
    kd = dims[:r - 1]
    eps = b.const(op.attrs.epsilon, ct)
    inv = b.map_elementwise([var], kd, ct, lambda v: math.rsqrt(arith.addf(v, eps)))
    part = affine_map(r, list(range(r - 1)))

    def norm(sv, *rest):
        rest = list(rest[:-1])
        m = None if simplified else rest.pop(0)
        iv, g = rest.pop(0), rest.pop(0)
        d = sv if simplified else arith.subf(sv, m)
        y = arith.mulf(arith.mulf(d, iv), _to(g, ct))
        if beta is not None:
            y = arith.addf(y, _to(rest.pop(0), ct))
        return _to(y, et)
    ins, maps = [s], [full]
    if not simplified:
        ins, maps = ins + [mean], maps + [part]
    ins, maps = ins + [inv, gamma], maps + [part, vec]
    if beta is not None:
        ins, maps = ins + [beta], maps + [vec]
    outs = {}
    slots = result_slots(op)
    outs[0] = b.generic(ins, [b.empty(dims, et)], maps + [full], ["parallel"] * r, norm)[0]
    stat_dims = kd + [1]
    for i, slot in enumerate(slots):
        if slot == 1:
            m = b.full(kd, ct, 0.0) if simplified else mean
            outs[1] = _stat_result(op, b, m, i, stat_dims)
        elif slot == 2:
            outs[2] = _stat_result(op, b, inv, i, stat_dims)
        elif slot == 3:
            outs[3] = s if et == ct else b.map_elementwise([s], dims, et, lambda v: _to(v, et))
    return [b.cast_to(outs[slot], b.result_type(op, i)) for i, slot in enumerate(slots)]


for _op in SKIP_OPS:
    lowering(_op, 1, domain=MS)(lower_skip_layer_norm)


@lowering("SimplifiedLayerNormalization", 1)
def lower_simplified_layer_norm(op: OnnxOp, b: LoweringContext):
    x, scale = op.input(0), op.input(1)
    r, sr = b.ranked(op, x).rank, b.ranked(op, scale, "scale").rank
    et = x.type.element_type
    if not isinstance(et, (ir.F32Type, ir.F16Type, ir.BF16Type, ir.F64Type)):
        op.fail(f"input X must be a float tensor, got {x.type}")
    if scale.type.element_type != et:
        op.fail(f"scale must have X's element type, got {scale.type}")
    if op.attrs.stash_type != 1:
        op.fail(f"stash_type {op.attrs.stash_type} is not supported (only 1: float)")
    if r < 1 or sr > r:
        op.fail(f"scale {scale.type} must broadcast to X {x.type}")
    axis = op.attrs.axis
    if not -r <= axis < r:
        op.fail(f"axis {axis} is out of range for rank {r}")
    axis = axis + r if axis < 0 else axis
    simplified_checks(checks(op, b), b.ixdims(x), b.ixdims(scale))
    dims = b.dims(x)
    scale = runtime_broadcast(b, scale, dims, r, {})
    ct = et if isinstance(et, ir.F64Type) else ir.F32Type.get()
    xc = x if ct == et else b.map_elementwise([x], dims, ct, lambda v: _to(v, ct))
    _, msq = moments(b, xc, list(range(axis, r)), squares_only=True)
    kd = dims[:axis]
    eps = b.const(op.attrs.epsilon, ct)
    inv = b.map_elementwise([msq], kd, ct, lambda v: math.rsqrt(arith.addf(v, eps)))
    full, part = affine_map(r, list(range(r))), affine_map(r, list(range(axis)))

    def body(v, iv, s, _o):
        return _to(arith.mulf(arith.mulf(v, iv), _to(s, ct)), et)
    y = b.generic([xc, inv, scale], [b.empty(dims, et)],
                  [full, part, _bcast_map(scale, dims, r), full], ["parallel"] * r, body)[0]
    outs = [b.cast_to(y, b.result_type(op, 0))]
    if len(op.op.results) > 1:
        outs.append(_stat_result(op, b, inv, 1, kd + [1] * (r - axis)))
    return outs
