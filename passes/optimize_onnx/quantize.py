"""DequantizeLinear of constant weights -> f32 constants (compile time).

A QDQ model (``onnxruntime.quantization.quantize_static``) keeps its conv
and matmul weights as int8 initializers, each behind a DequantizeLinear.
Shape inference folds only small constants (``fold_constants``); the
weights are ``dense_resource`` blobs of any size. Here every
DequantizeLinear whose operands are all constants is evaluated at compile
time by its family's rule (``dialects/onnx/ops/quantize.fold_dequantize``,
the lowering's arithmetic, so no bit changes) and replaced by an f32
constant: the conv or matmul after it then has constant weights, which the
-O3 kernels pack at compile time, instead of a dequantized copy of every
weight written on every run. The int8 initializer is then dead.

Measured on Zen 4, QDQ ResNet-18 (U8 activations, S8 per-channel weights),
1 thread: 71.5 ms before (78% of it in DequantizeLinear), see the commit.
The convs still compute in f32 on the dequantized values; int8 kernels
(VNNI, AMX) are issue #28's next step.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.ops.quantize import fold_dequantize
from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, create_op, is_constant,
                                                       lowerable_spec, make_constant, module_opset,
                                                       onnx_ops, producer_view, replace,
                                                       replace_with_constant)


def fold_constant_dequantize(module: ir.Module) -> int:
    """Every DequantizeLinear of constants -> an f32 (f64) constant; returns how many."""
    ops = [d for d in onnx_ops(module, "DequantizeLinear")
           if all(v is None or is_constant(v) for v in [d.input(i) for i in range(3)])
           and d.input(0) is not None and d.input(1) is not None]
    if not ops:
        return 0
    operands = [[d.input(i) for i in range(3)] for d in ops]
    flat = [v for vs in operands for v in vs if v is not None]
    values = dict(zip(map(id, flat), constant_values(flat)))   # one print for all
    count = 0
    for d, vs in zip(ops, operands):
        inputs = [values[id(v)] if v is not None else None for v in vs]
        if inputs[2] is None:
            inputs = inputs[:2]
        if any(x is None for x in inputs):
            continue
        y = fold_dequantize(d, inputs)
        if y is None or list(y.shape) != list(getattr(d.op.results[0].type, "shape", [])):
            continue
        replace_with_constant(d.op, y, "dequantized")
        count += 1
    return count


# -- QDQ conv groups -> QLinearConv (the int8 kernels' input) -----------------------
# Module attribute set by the compiler (compiler.lower) when the -O3 target has
# int8 kernels (passes/optimize/conv_q8.py: AVX-512 VNNI): only then is a QDQ
# group computed in integers; elsewhere the f32 path is faster.
INT8_ATTR = "onnx_mlir_py.int8_kernels"


def _one(v: np.ndarray | None) -> bool:
    return v is not None and v.size == 1


def _int8(v: ir.Value) -> bool:
    t = v.type
    return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.IntegerType) \
        and t.element_type.width == 8


def fuse_qdq_conv(module: ir.Module) -> int:
    """``Q(Conv(DQ(xq), DQ(wq), DQ(bq)))`` (a ReLU may sit before the Q) ->
    ``QLinearConv(xq, ..., wq, ..., bq)`` (``Clip(., min=zy)`` for the ReLU:
    ``Q(relu(y)) = max(Q(y), zy)``), for the groups the int8 conv kernel
    takes: 2-D, one group, static shapes, per-tensor 8-bit activations, s8
    weights per tensor or per output channel with zero points 0, an int32
    bias of scale sx * sw, output channels as ``conv_q8.supported`` takes
    them (a multiple of 8 at stride 1, else of 16). Only in a module
    marked with INT8_ATTR (see above).

    What changes: the conv's sum is exact in int32 and requantized once, as
    onnxruntime's optimized sessions (and its QLinearConv) compute a QDQ
    group; the f32 path (dequantize, f32 conv, quantize) rounds each product
    and the sum. Outputs may differ by one quantization step where the f32
    sum falls near a rounding boundary, as onnxruntime's own optimization
    levels do."""
    if INT8_ATTR not in module.operation.attributes:
        return 0
    opset = module_opset(module)
    qconv, clip = lowerable_spec("QLinearConv", opset), lowerable_spec("Clip", opset)
    if qconv is None or clip is None or clip.since_version < 12:
        return 0
    count = 0
    for conv in onnx_ops(module, "Conv"):
        found = _qdq_conv(conv)
        if found is None:
            continue
        (xq, sx, zx, wq, sw, zw, bq), q, relu, (sxv, swv, zwv, f) = found
        sy, zy = q.input(1), q.input(2)
        loc = q.op.location
        with ir.InsertionPoint(q.op), loc:
            if zx is None:
                zx = make_constant(np.zeros((), np.uint8 if xq.type.element_type.is_unsigned
                                            else np.int8), loc, "zero_point")
            if zw is None:
                zw = make_constant(np.zeros(swv.shape, np.int8), loc, "zero_point")
            if isinstance(bq, np.ndarray):
                bq = make_constant(bq, loc, "bias_int32")
            attrs = {k: conv.op.attributes[k] for k in
                     ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")
                     if k in conv.op.attributes}
            y = create_op(qconv, [xq, sx, zx, wq, sw, zw, sy, zy, bq],
                          [q.op.results[0].type], attrs, loc).results[0]
            if relu is not None:        # Clip-12+ takes 8-bit integers
                y = create_op(clip, [y, zy, None], [q.op.results[0].type], {}, loc).results[0]
        replace(q.op, y)
        count += 1
    return count


def _qdq_operands(dqx, dqw, b, f: int, axes: tuple):
    """The 8-bit operands of a QDQ conv / gemm group: ``((xq, sx, zx, wq, sw,
    zw, bq), (sxv, swv, zwv))`` (bq: the int32 bias value, a numpy array when
    recovered from a folded f32 bias, or None) when x is per tensor, w is a
    constant s8 per tensor or per output channel (``f`` of them, along one of
    ``axes``) with zero points 0, and the bias (``b``) an int32 of scale
    sx * sw; else None."""
    from onnx_mlir_py.passes.optimize_onnx.ir_util import producer_view
    dqb = producer_view(b, "DequantizeLinear") if b is not None else None
    if b is not None and dqb is None and not is_constant(b):
        return None
    for d in (dqx, dqw, dqb):
        if d is not None and "block_size" in d.spec.attributes and d.attrs.block_size:
            return None
    xq, sx, zx = dqx.input(0), dqx.input(1), dqx.input(2)
    wq, sw, zw = dqw.input(0), dqw.input(1), dqw.input(2)
    if not (_int8(xq) and _int8(wq)) or wq.type.element_type.is_unsigned:
        return None
    consts = [sx, zx, wq, sw, zw] + ([dqb.input(0), dqb.input(1), dqb.input(2)] if dqb else [])
    if not all(v is None or is_constant(v) for v in consts):
        return None
    vals = constant_values([v for v in consts if v is not None])
    it = iter(vals)
    sxv, zxv, wqv, swv, zwv = (next(it) if v is not None else None for v in consts[:5])
    if not _one(sxv) or (zx is not None and not _one(zxv)) or wqv is None or swv is None:
        return None
    if swv.size not in (1, f) or (swv.size == f and swv.ndim != 1) or \
            (swv.size == f and f > 1 and dqw.attrs.axis not in axes):
        return None
    if zwv is not None and (zwv.shape != swv.shape or np.any(zwv)):
        return None
    if swv.dtype != np.float32 or sxv.dtype != np.float32:
        return None
    bq = None
    if b is not None and dqb is None:
        # a bias DequantizeLinear already folded (shape inference folds small
        # ones): its int32 values, if the f32 constant is exactly their dequantization
        bv = constant_values([b])[0]
        bq = _int32_bias(bv.reshape(-1) if bv is not None and bv.size == f else None,
                         sxv, swv, f)
        if bq is None:
            return None
    if dqb is not None:
        bqv, sbv, zbv = (next(it) if v is not None else None for v in consts[5:])
        if bqv is None or bqv.dtype != np.int32 or bqv.size != f or sbv is None or \
                (zbv is not None and np.any(zbv)):
            return None
        want = (np.float32(sxv.reshape(())) * swv.reshape(-1)).astype(np.float32)
        if not np.allclose(sbv.reshape(-1), want, rtol=1e-6, atol=0):
            return None
        bq = dqb.input(0)
    return (xq, sx, zx, wq, sw, zw, bq), (sxv, swv, zwv)


def _qdq_conv(conv):
    """The parts of a QDQ conv group :func:`fuse_qdq_conv` rewrites, or None."""
    from onnx_mlir_py.passes.optimize_onnx.ir_util import n_uses, producer_view, static_shape
    if len(conv.op.results) != 1 or static_shape(conv.op.results[0]) is None:
        return None
    if "group" in conv.op.attributes and conv.attrs.group != 1:
        return None
    dqx, dqw = producer_view(conv.input(0), "DequantizeLinear"), \
        producer_view(conv.input(1), "DequantizeLinear")
    if dqx is None or dqw is None or static_shape(conv.input(0)) is None:
        return None
    from onnx_mlir_py.passes.optimize.conv_q8 import supported
    ws = static_shape(conv.input(1))
    strides = tuple(conv.attrs.strides) if "strides" in conv.op.attributes and \
        conv.attrs.strides is not None else (1, 1)
    if ws is None or len(ws) != 4 or not supported(ws[0], strides):
        return None
    f = ws[0]
    found = _qdq_operands(dqx, dqw, conv.input(2), f, (0, -4))
    if found is None:
        return None
    (xq, sx, zx, wq, sw, zw, bq), (sxv, swv, zwv) = found
    # the conv's only consumer: QuantizeLinear, or a ReLU whose only consumer is one
    y = conv.op.results[0]
    if n_uses(y) != 1:
        return None
    user = next(iter(y.uses)).owner
    relu = None
    from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
    user = user.operation if isinstance(user, ir.OpView) else user
    if not is_onnx_op(user):
        return None
    uv = OnnxOp(user)
    if uv.op_type == "Relu" and not uv.spec.domain:
        if n_uses(user.results[0]) != 1:
            return None
        relu = uv
        user = next(iter(user.results[0].uses)).owner
        user = user.operation if isinstance(user, ir.OpView) else user
        if not is_onnx_op(user):
            return None
        uv = OnnxOp(user)
    if uv.op_type != "QuantizeLinear" or uv.spec.domain or uv.input(2) is None:
        return None
    sy, zy = uv.input(1), uv.input(2)
    if not (is_constant(sy) and is_constant(zy)):
        return None
    syv, zyv = constant_values([sy, zy])
    if not (_one(syv) and _one(zyv)) or syv.dtype != np.float32 or zyv.dtype not in (np.uint8,
                                                                                     np.int8):
        return None
    if "block_size" in uv.spec.attributes and uv.attrs.block_size:
        return None
    return (xq, sx, zx, wq, sw, zw, bq), uv, relu, (sxv, swv, zwv, f)


def _int32_bias(bv: np.ndarray | None, sxv: np.ndarray, swv: np.ndarray, f: int):
    """The int32 bias ``bq`` whose DequantizeLinear (scale sx * sw, in f32 as
    the quantizer computes it) is exactly the f32 bias ``bv``, as a numpy
    array; None when there is none (a bias not made by a quantizer)."""
    if bv is None or bv.dtype != np.float32 or bv.shape != (f,):
        return None
    sb = (np.float32(sxv.reshape(())) * swv.reshape(-1).astype(np.float32)).astype(np.float32)
    if np.any(sb == 0):
        return None
    q = np.round(bv.astype(np.float64) / sb.astype(np.float64))
    if np.any(np.abs(q) >= 2 ** 24):
        return None
    q = q.astype(np.int32)
    if not np.array_equal((q.astype(np.float32) * sb).astype(np.float32), bv):
        return None
    return q


# -- QDQ Gemm groups -> com.microsoft QGemm (the int8 matmul kernel's input) ------------
def fuse_qdq_gemm(module: ir.Module) -> int:
    """``Gemm(DQ(xq), DQ(wq), DQ(bq))`` (-> ``Q``) -> ``QGemm(xq, ..., wq, ..., bq)``
    (onnxruntime's contrib op, with its float output or, when a
    QuantizeLinear is the Gemm's only consumer, its quantized one): the
    classifier heads of QDQ CNNs, which otherwise multiply the dequantized
    f32 weights (4x the bytes) in f32. Taken: transA 0, alpha and beta 1,
    per-tensor 8-bit activations, s8 weights per tensor or per output
    column with zero points 0, an int32 bias of scale sx * sw (or its f32
    dequantization, recovered exactly as for convs). Only in a module
    marked with INT8_ATTR (the int8 kernels; ``matmul_q8``). What changes:
    the products are summed exactly in int32 and scaled once, as
    onnxruntime's optimized session computes the group."""
    if INT8_ATTR not in module.operation.attributes:
        return 0
    qgemm = lowerable_spec("QGemm", module_opset(module), "com.microsoft")
    if qgemm is None:
        return 0
    count = 0
    for gemm in onnx_ops(module, "Gemm"):
        found = _qdq_gemm(gemm)
        if found is None:
            continue
        (xq, sx, zx, wq, sw, zw, bq), q, trans_b = found
        out = q.op if q is not None else gemm.op
        loc = out.location
        with ir.InsertionPoint(out), loc:
            if zx is None:
                zx = make_constant(np.zeros((), np.uint8 if xq.type.element_type.is_unsigned
                                            else np.int8), loc, "zero_point")
            if zw is None:
                zw = make_constant(np.zeros((), np.int8), loc, "zero_point")
            if isinstance(bq, np.ndarray):
                bq = make_constant(bq, loc, "bias_int32")
            ins = [xq, sx, zx, wq, sw, zw, bq] + ([q.input(1), q.input(2)] if q else [])
            attrs = {"transB": ir.IntegerAttr.get(ir.IntegerType.get_signed(64), int(trans_b))}
            y = create_op(qgemm, ins, [out.results[0].type], attrs, loc).results[0]
        replace(out, y)
        count += 1
    return count


def _qdq_gemm(gemm):
    """The parts of a QDQ Gemm group :func:`fuse_qdq_gemm` rewrites, or None."""
    from onnx_mlir_py.passes.optimize_onnx.ir_util import static_shape
    if len(gemm.op.results) != 1 or static_shape(gemm.input(1)) is None:
        return None
    a = gemm.op.attributes
    if ("transA" in a and gemm.attrs.transA) or ("alpha" in a and gemm.attrs.alpha != 1.0) \
            or ("beta" in a and gemm.attrs.beta != 1.0):
        return None
    trans_b = bool(gemm.attrs.transB) if "transB" in a else False
    dqx, dqw = producer_view(gemm.input(0), "DequantizeLinear"), \
        producer_view(gemm.input(1), "DequantizeLinear")
    if dqx is None or dqw is None:
        return None
    ws = static_shape(gemm.input(1))
    if ws is None or len(ws) != 2:
        return None
    n = ws[0] if trans_b else ws[1]
    # the weight's dim of the output columns: 0 with transB, else 1
    found = _qdq_operands(dqx, dqw, gemm.input(2), n, (0, -2) if trans_b else (1, -1))
    if found is None:
        return None
    (xq, sx, zx, wq, sw, zw, bq), _ = found
    # a QuantizeLinear as the only consumer: QGemm's quantized output
    q = _scalar_quantize_user(gemm.op.results[0])
    return (xq, sx, zx, wq, sw, zw, bq), q[0] if q else None, trans_b


def _scalar_quantize_user(y: ir.Value):
    """``(q, syv, zyv)`` when ``y``'s only consumer is a QuantizeLinear with
    a constant f32 scalar scale and an 8-bit scalar zero point; else None."""
    from onnx_mlir_py.passes.optimize_onnx.ir_util import n_uses
    if n_uses(y) != 1:
        return None
    from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
    user = next(iter(y.uses)).owner
    user = user.operation if isinstance(user, ir.OpView) else user
    if not is_onnx_op(user):
        return None
    uv = OnnxOp(user)
    if uv.op_type != "QuantizeLinear" or uv.spec.domain or uv.input(2) is None \
            or not (is_constant(uv.input(1)) and is_constant(uv.input(2))):
        return None
    syv, zyv = constant_values([uv.input(1), uv.input(2)])
    if not (_one(syv) and _one(zyv)) or syv.dtype != np.float32 or \
            zyv.dtype not in (np.uint8, np.int8) or \
            ("block_size" in uv.spec.attributes and uv.attrs.block_size):
        return None
    return uv, syv, zyv


# -- DQ -> MaxPool -> Q of one grid -> MaxPool on the 8-bit tensor ------------------------
def fuse_qdq_maxpool(module: ir.Module) -> int:
    """``Q(MaxPool(DQ(xq, s, z)), s, z)`` -> ``MaxPool(xq)`` (MaxPool takes
    8-bit integers since opset 12): a QDQ CNN's stem pool, which otherwise
    runs on the dequantized f32 map (4x the bytes). Exact: for s > 0 the
    dequantization is increasing, so max commutes with it, and quantizing
    with the same scale and zero point gives the 8-bit value back; the
    padding (-inf in f32, the type's minimum on integers) is never the max
    of a window with an image element, and a window of padding alone gives
    the type's minimum both ways (Q(-inf) saturates). Taken only when
    both scales are the same positive normal f32 scalar constant, both zero
    points the same 8-bit scalar of xq's type, the DQ's result is used only
    by the MaxPool and the MaxPool's (it has no used Indices) only by the
    Q; different scales, per-axis or blocked quantization and AveragePool
    are not exact and stay. Not tied to the int8 kernels: the integer
    MaxPool is exact on every target.

    Speed (Zen 4, 1 thread): the 8-bit 3x3/2 pool of 1x64x112x112 alone
    takes 144 us against 255 us in f32, but -O3's row kernel
    (passes/optimize/pool.py) takes only f32 pools; the integer one runs as
    linalg's loop nest after a materialized pad, which is fast only when its
    input is in L2: with two inputs alternating it takes 330-370 us (f32:
    270-280). In ResNet-50 QDQ it costs about what the f32 chain did (stem
    conv + pool 1093 -> 1135 us median): no gain until the row kernel takes
    8-bit pools."""
    spec = lowerable_spec("MaxPool", module_opset(module))
    if spec is None or spec.since_version < 12:
        return 0
    count = 0
    for pool in onnx_ops(module, "MaxPool"):
        q = _qdq_maxpool(pool)
        if q is None:
            continue
        xq = producer_view(pool.input(0), "DequantizeLinear").input(0)
        attrs = {k: pool.op.attributes[k] for k in
                 ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides")
                 if k in pool.op.attributes}
        loc = q.op.location
        with ir.InsertionPoint(q.op), loc:
            y = create_op(spec, [xq], [q.op.results[0].type], attrs, loc).results[0]
        replace(q.op, y)
        count += 1
    return count


def _qdq_maxpool(pool):
    """The QuantizeLinear of a DQ -> MaxPool -> Q chain of one grid (see
    :func:`fuse_qdq_maxpool`), or None."""
    from onnx_mlir_py.passes.optimize_onnx.ir_util import n_uses
    if any(n_uses(r) for r in list(pool.op.results)[1:]):
        return None
    dq = producer_view(pool.input(0), "DequantizeLinear")
    if dq is None or n_uses(pool.input(0)) != 1 or not _int8(dq.input(0)) or \
            ("block_size" in dq.spec.attributes and dq.attrs.block_size):
        return None
    found = _scalar_quantize_user(pool.op.results[0])
    if found is None:
        return None
    q, syv, zyv = found
    sx, zx = dq.input(1), dq.input(2)
    if not is_constant(sx) or (zx is not None and not is_constant(zx)):
        return None
    sxv, zxv = constant_values([sx, zx]) if zx is not None else (constant_values([sx])[0], None)
    xq = dq.input(0)
    if zxv is None:     # no zero point: 0 of the input's type
        zxv = np.zeros((), np.uint8 if xq.type.element_type.is_unsigned else np.int8)
    if not (_one(sxv) and _one(zxv)) or sxv.dtype != np.float32 or zxv.dtype != zyv.dtype:
        return None
    s = float(sxv.reshape(()))
    if float(syv.reshape(())) != s or int(zxv.reshape(())) != int(zyv.reshape(())) or \
            not (np.finfo(np.float32).tiny <= s and 255 * s < np.finfo(np.float32).max):
        return None
    if q.op.results[0].type.element_type != xq.type.element_type:
        return None
    return q
