"""BatchNormalization (inference mode) -> one linalg.generic:
y = (x - mean) / sqrt(var + epsilon) * scale + B, channel dim 1.
LayerNormalization -> two reductions (mean, variance) + one generic."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import require_same_dim

_BN_NAMES = ("scale", "B", "input_mean", "input_var")


def require_channel_len(op: OnnxOp, b: LoweringContext, x: ir.Value, params) -> None:
    """1-D per-channel parameters (``(value, name)``) have x's dim 1 elements."""
    for v, name in params:
        if v is not None:
            require_same_dim(op, b, v, 0, x, 1, name, "X")


def require_broadcast_to(op: OnnxOp, b: LoweringContext, x: ir.Value, v: ir.Value,
                         name: str) -> None:
    """``v`` (right-aligned on x) is read at x's indices wherever its dim is
    not a static 1: those dims must be x's."""
    r, vr = x.type.rank, v.type.rank
    for j in range(vr):
        if v.type.is_dynamic_dim(j) or v.type.shape[j] != 1:
            require_same_dim(op, b, v, j, x, r - vr + j, name, "X")


@lowering("BatchNormalization", 9, 14, 15)
def lower_batch_norm(op: OnnxOp, b: LoweringContext):
    if "training_mode" in op.spec.attributes and op.attrs.training_mode:
        op.fail("training_mode=1 is not supported")
    if any(len(list(r.uses)) for r in op.op.results[1:]):
        op.fail("running mean/var outputs are not supported (inference only)")
    x, scale, bias, mean, var = (op.input(i) for i in range(5))
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if r < 2 or not is_float(et):
        op.fail("input must be a float tensor of rank >= 2")
    for v in (scale, bias, mean, var):
        if b.ranked(op, v).rank != 1 or v.type.element_type != et:
            op.fail("scale, B, mean and var must be 1-D of the input's element type")
    require_channel_len(op, b, x, zip((scale, bias, mean, var), _BN_NAMES))
    eps = op.attrs.epsilon
    dims = b.dims(x)
    full = affine_map(r, list(range(r)))
    ch = affine_map(r, [1])

    def body(xv, s, bb, m, v, _o):
        inv = math.rsqrt(arith.addf(v, b.const(eps, et)))
        return arith.addf(arith.mulf(arith.mulf(arith.subf(xv, m), inv), s), bb)
    y = b.generic([x, scale, bias, mean, var], [b.empty(dims, et)],
                  [full, ch, ch, ch, ch, full], ["parallel"] * r, body)[0]
    rest = [b.full(b.dims(v), et, 0.0) for v in (mean, var)][:len(op.op.results) - 1]
    return [y] + rest


# -- LayerNormalization -----------------------------------------------------------
def _to(x, et):
    from onnx_mlir_py.passes.onnx_to_linalg.builder import convert_scalar
    return convert_scalar(x, False, et)


@lowering("LayerNormalization", 17)
def lower_layer_norm(op: OnnxOp, b: LoweringContext):
    """Normalise over dims [axis, rank): mean, variance (two reductions),
    then one generic for y = (x - mean) * rsqrt(var + eps) * scale + B.
    Statistics are computed in f32 for f16/bf16 inputs (stash_type 1), in
    the input type otherwise; Mean/InvStdDev keep the reduced dims as 1."""
    from onnx_mlir_py.passes.onnx_to_linalg.builder import affine_map as amap
    from onnx_mlir_py.passes.onnx_to_linalg.reshape import reshape_to
    x, scale, bias = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if not is_float(et):
        op.fail("input must be a float tensor")
    axis = op.attrs.axis
    if not -r <= axis < r:
        op.fail(f"axis {axis} is out of range for rank {r}")
    axis = axis + r if axis < 0 else axis
    ct = ir.F32Type.get() if (op.attrs.stash_type == 1 and et.width < 32) else et
    dims = b.dims(x)
    keep = list(range(axis))
    full = amap(r, list(range(r)))
    part = amap(r, keep)
    red_it = ["parallel"] * axis + ["reduction"] * (r - axis)
    kd = dims[:axis]
    n = 1
    for d in dims[axis:]:
        n = n * d if isinstance(d, int) and isinstance(n, int) else \
            arith.muli(b.as_index(n), b.as_index(d))
    if isinstance(n, int):
        nf = b.const(float(n), ct)
    else:
        nf = arith.sitofp(ct, arith.index_cast(ir.IntegerType.get_signless(64), n))
    s = b.generic([x], [b.full(kd, ct, 0.0)], [full, part], red_it,
                  lambda v, a: arith.addf(a, _to(v, ct)))[0]
    mean = b.map_elementwise([s], kd, ct, lambda v: arith.divf(v, nf))

    def sq(v, m, a):
        d = arith.subf(_to(v, ct), m)
        return arith.addf(a, arith.mulf(d, d))
    ss = b.generic([x, mean], [b.full(kd, ct, 0.0)], [full, part, part], red_it, sq)[0]
    eps = b.const(op.attrs.epsilon, ct)
    inv = b.map_elementwise([ss], kd, ct,
                            lambda v: math.rsqrt(arith.addf(arith.divf(v, nf), eps)))

    def bmap(v):  # scale / B broadcast (numpy rules) against x
        vr = b.ranked(op, v).rank
        ex = []
        for j in range(vr):
            k = r - vr + j
            one = not v.type.is_dynamic_dim(j) and v.type.shape[j] == 1
            ex.append("0" if one and dims[k] != 1 else k)
        return amap(r, ex)
    for v, name in ((scale, "Scale"), (bias, "B")):
        if v is not None:
            require_broadcast_to(op, b, x, v, name)
    ins = [x, mean, inv, scale] + ([bias] if bias is not None else [])
    maps = [full, part, part, bmap(scale)] + ([bmap(bias)] if bias is not None else [])

    def body(v, m, iv, sc, *rest):
        y = arith.mulf(arith.mulf(arith.subf(_to(v, ct), m), iv), _to(sc, ct))
        if bias is not None:
            y = arith.addf(y, _to(rest[0], ct))
        return _to(y, et)
    y = b.generic(ins, [b.empty(dims, et)], maps + [full], ["parallel"] * r, body)[0]
    outs = [y]
    stat_dims = kd + [1] * (r - axis)
    for i, v in ((1, mean), (2, inv)):
        if i >= len(op.op.results):
            break
        rt = b.result_type(op, i)
        if rt.element_type != ct:
            v = b.map_elementwise([v], kd, rt.element_type,
                                  lambda a, t=rt.element_type: _to(a, t))
        outs.append(reshape_to(op, b, v, stat_dims))
    return outs
