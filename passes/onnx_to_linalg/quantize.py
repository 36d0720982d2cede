"""QuantizeLinear / DequantizeLinear -> one linalg.generic each;
DynamicQuantizeLinear -> a min/max reduction and one generic.

Granularity from the scale's shape: per-tensor (scalar or one element),
per-axis (1-D of length x.shape[axis]) or blocked (x's rank, dim ``axis``
divided by ``block_size``: an affine floordiv map). Quantize rounds half to
even (math.roundeven) and saturates to the output integer range (int2/int4
to int32, stored through cast_bits; NaN gives the lowest value, as in
onnxruntime and onnx.reference); float8 outputs are x / scale cast with
the ``saturate`` rule (no zero point, as the spec and onnx.reference), float4
is x / scale + zero point cast (always saturating). DequantizeLinear reads
every such type exactly (cast_bits), ignoring a float zero point as the
reference does.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg import cast_bits as cb
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map, convert_scalar,
                                                        elem_of, is_float, to_signless)
from onnx_mlir_py.passes.onnx_to_linalg.cast import read_scalar, write_scalar
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast


def _quant_kind(op: OnnxOp, t: ir.Type, what: str) -> str:
    """"int" (2/4/8/16/32-bit integers), "f8" (float8 but E8M0) or "f4"."""
    s = str(t)
    if isinstance(t, ir.IntegerType) and t.width in (2, 4, 8, 16, 32):
        return "int"
    if s in cb.FORMATS and s.startswith("f8"):
        return "f8"
    if s == "f4E2M1FN":
        return "f4"
    op.fail(f"{what} element type {t} is not a quantized type (2/4/8/16/32-bit integers, "
            f"float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ, float4 E2M1)")


def _param_map(op: OnnxOp, x: ir.Value, p: ir.Value, what: str) -> ir.AffineMap:
    """Indexing map of the scale / zero point over x's iteration space."""
    r = x.type.rank
    ps = op.shape(p)
    if ps is None:
        op.fail(f"{what} has no ranked type")
    n = 1
    for d in ps:
        n = n * d if d is not None else -1
    if len(ps) == 0:
        return ir.AffineMap.get(r, 0, [])
    axis = op.attrs.axis if "axis" in op.spec.attributes else 1
    axis = axis + r if axis < 0 else axis
    block = op.attrs.block_size if "block_size" in op.spec.attributes else 0
    if len(ps) == 1 and not block:
        if n == 1:  # one element: per tensor
            return affine_map(r, ["0"])
        if not 0 <= axis < r:
            op.fail(f"axis {op.attrs.axis} out of range for rank {r}")
        return affine_map(r, [axis])
    if block and len(ps) == r:
        if not 0 <= axis < r:
            op.fail(f"axis {op.attrs.axis} out of range for rank {r}")
        es = [ir.AffineDimExpr.get(k) for k in range(r)]
        es[axis] = ir.AffineExpr.get_floor_div(es[axis], ir.AffineConstantExpr.get(block))
        return ir.AffineMap.get(r, 0, es)
    op.fail(f"{what} shape {list(ps)} matches no quantization granularity "
            f"(scalar, 1-D per axis, or blocked with block_size)")


def _fit_param(op: OnnxOp, b: LoweringContext, x: ir.Value, p: ir.Value | None,
               what: str) -> ir.Value | None:
    """``p`` (scale / zero point) checked against x's dims where ``_param_map``
    reads it with x's indices: per axis, its length is x's dim ``axis``
    (a 1-D ``p`` of dynamic length that is 1 at run time is per tensor: it is
    broadcast); blocked, its dims are x's with ceil(dim / block_size) on axis."""
    if p is None:
        return None
    ps, r = op.shape(p), x.type.rank
    if not ps:
        return p
    axis = op.attrs.axis if "axis" in op.spec.attributes else 1
    axis = axis + r if axis < 0 else axis
    block = op.attrs.block_size if "block_size" in op.spec.attributes else 0
    chk = checks(op, b)
    if len(ps) == 1 and not block and ps[0] != 1 and 0 <= axis < r:
        dp, dx = b.ixdim(p, 0), b.ixdim(x, axis)
        if ps[0] is None:
            chk.require(D.either(D.eq(dp, dx), D.eq(dp, 1)), f"{what} has {{0}} elements, "
                        f"expected 1 or x's dim {axis} ({{1}})", dp, dx)
            return runtime_broadcast(b, p, [b.dim(x, axis)], 1, {})
        chk.require(D.eq(dp, dx), f"{what} has {{0}} elements, expected x's dim {axis} "
                    f"({{1}})", dp, dx)
    elif block and len(ps) == r:
        for k in range(r):
            dp, dx = b.ixdim(p, k), b.ixdim(x, k)
            want = D.ceil_div(dx, block) if k == axis else dx
            chk.require(D.eq(dp, want), f"{what} dim {k} is {{0}}, expected {{1}} (x's dim "
                        f"{k} is {{2}}, block_size {block})", dp, want, dx)
    return p


def _compute_type(op: OnnxOp, scale: ir.Value) -> ir.Type:
    et = elem_of(scale.type)
    if not is_float(et):
        op.fail(f"scale element type {et} is not a float type")
    return ir.F64Type.get() if isinstance(et, ir.F64Type) else ir.F32Type.get()


def _elementwise_operands(op: OnnxOp, b: LoweringContext, x: ir.Value, scale: ir.Value,
                          zp: ir.Value | None, prefix: str):
    """The fitted zero point, and the inputs and indexing maps of a generic
    over x's iteration space reading x, the scale and the zero point (if
    any); ``prefix``: "y" (QuantizeLinear) or "x" (DequantizeLinear)."""
    r = x.type.rank
    scale = _fit_param(op, b, x, scale, f"{prefix}_scale")
    zp = _fit_param(op, b, x, zp, f"{prefix}_zero_point")
    params = [(scale, f"{prefix}_scale")]
    if zp is not None:
        params.append((zp, f"{prefix}_zero_point"))
    ident = affine_map(r, list(range(r)))
    maps = [ident] + [_param_map(op, x, p, what) for p, what in params] + [ident]
    return zp, [x] + [p for p, _ in params], maps


@lowering("QuantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def lower_quantize_linear(op: OnnxOp, b: LoweringContext):
    x, scale, zp = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    b.ranked(op, scale, "y_scale")
    if "precision" in op.spec.attributes and op.attrs.precision:
        op.fail("the precision attribute is not supported")
    onnx_out = elem_of(op.op.results[0].type)
    kind = _quant_kind(op, onnx_out, "output")
    saturate = bool(op.attrs.saturate) if "saturate" in op.spec.attributes else True
    out = to_signless(onnx_out)
    ct = _compute_type(op, scale)
    x_et = b.onnx_elem(x)
    zp_et = b.onnx_elem(zp) if zp is not None else None
    if kind == "f8":
        zp = None                     # must be 0 (spec); onnx.reference ignores it
    zp, ins, maps = _elementwise_operands(op, b, x, scale, zp, "y")
    if kind == "int":
        w, uns = onnx_out.width, onnx_out.is_unsigned
        lo, hi = (0, (1 << w) - 1) if uns else (-(1 << (w - 1)), (1 << (w - 1)) - 1)

    def body(xv, s, *rest):
        xv, x_uns = read_scalar(xv, x_et)
        q = arith.divf(convert_scalar(xv, x_uns, ct), convert_scalar(s, False, ct))
        if kind != "int":
            if zp is not None:          # float4: + zero point, then cast
                zv, _ = read_scalar(rest[0], zp_et)
                q = arith.addf(q, convert_scalar(zv, False, ct))
            return write_scalar(q, False, onnx_out, saturate)
        # NaN quantizes to the lowest value, as in onnxruntime and onnx.reference (the
        # spec leaves it open); through the NaN-propagating clamp it was poison for fptosi
        q = arith.select(arith.cmpf(arith.CmpFPredicate.UNO, q, q), b.const(float("-inf"), ct), q)
        q = math.roundeven(q)
        if zp is not None:
            zv, z_uns = read_scalar(rest[0], zp_et)
            q = arith.addf(q, convert_scalar(zv, z_uns, ct))
        q = arith.minimumf(arith.maximumf(q, b.const(lo, ct)), b.const(hi, ct))
        if w < 8:
            return cb.encode_int(arith.fptosi(ir.IntegerType.get_signless(8), q), w)
        return arith.fptoui(out, q) if uns else arith.fptosi(out, q)
    return b.generic(ins, [b.empty(b.dims(x), out)], maps, ["parallel"] * r, body)


@lowering("DequantizeLinear", 10, 13, 19, 21, 23, 24, 25, 28)
def lower_dequantize_linear(op: OnnxOp, b: LoweringContext):
    x, scale, zp = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, x).rank
    b.ranked(op, scale, "x_scale")
    x_et = b.onnx_elem(x)
    kind = _quant_kind(op, x_et, "input")
    zp_et = b.onnx_elem(zp) if zp is not None else None
    if kind != "int":
        zp = None                     # float8 / float4: no zero point (as onnx.reference)
    onnx_out = elem_of(op.op.results[0].type)
    out = b.result_type(op).element_type
    if not is_float(out):
        op.fail(f"output element type {out} is not a float type")
    ct = _compute_type(op, scale)
    zp, ins, maps = _elementwise_operands(op, b, x, scale, zp, "x")

    def body(xv, s, *rest):
        xv, x_uns = read_scalar(xv, x_et)
        v = convert_scalar(xv, x_uns, ct)
        if zp is not None:
            zv, z_uns = read_scalar(rest[0], zp_et)
            v = arith.subf(v, convert_scalar(zv, z_uns, ct))
        s_plain, _ = read_scalar(s, b.onnx_elem(scale))
        return write_scalar(arith.mulf(v, convert_scalar(s_plain, False, ct)), False, onnx_out)
    return b.generic(ins, [b.empty(b.dims(x), out)], maps, ["parallel"] * r, body)


@lowering("DynamicQuantizeLinear", 11)
def lower_dynamic_quantize_linear(op: OnnxOp, b: LoweringContext):
    """scale = (max(0, max x) - min(0, min x)) / 255 (1/255 if that is 0),
    zp = roundeven(clamp(-min / scale, 0, 255)), y = clamp(roundeven(x / scale) + zp)."""
    from mlir.dialects import tensor
    x = op.input(0)
    n = b.ranked(op, x).rank
    f32 = ir.F32Type.get()
    if x.type.element_type != f32:
        op.fail("input must be float32")
    u8 = ir.IntegerType.get_signless(8)
    ident = affine_map(n, list(range(n)))
    to0 = ir.AffineMap.get(n, 0, [])
    def minmax(v, a, c):
        return [arith.maximumf(a, v), arith.minimumf(c, v)]
    zeros = [b.full([], f32, 0.0), b.full([], f32, 0.0)]
    if n >= 2:
        # per row first (a row reduction the -O3 vectorizer takes: a whole-tensor
        # one stayed a scalar loop, ~4 ns per element: BERT's FFN activations took
        # 1.7 ms), then the rows' maxima and minima; exact in any order
        rows = affine_map(n, list(range(n - 1)))
        mxr, mnr = b.generic([x], [b.full(b.dims(x)[:-1], f32, 0.0),
                                   b.full(b.dims(x)[:-1], f32, 0.0)],
                             [ident, rows, rows], ["parallel"] * (n - 1) + ["reduction"], minmax)
        identr, to0r = affine_map(n - 1, list(range(n - 1))), ir.AffineMap.get(n - 1, 0, [])
        mx, mn = b.generic([mxr, mnr], zeros, [identr, identr, to0r, to0r],
                           ["reduction"] * (n - 1),
                           lambda hi, lo, a, c: [arith.maximumf(a, hi), arith.minimumf(c, lo)])
    else:
        mx, mn = b.generic([x], zeros, [ident, to0, to0], ["reduction"] * n, minmax)
    mx, mn = tensor.extract(mx, []), tensor.extract(mn, [])
    rng = arith.subf(mx, mn)
    same = arith.cmpf(arith.CmpFPredicate.OEQ, mx, mn)
    scale = arith.divf(arith.select(same, b.const(1.0, f32), rng), b.const(255.0, f32))

    def clamp255(v):
        return arith.minimumf(arith.maximumf(v, b.const(0.0, f32)), b.const(255.0, f32))
    zp = math.roundeven(clamp255(arith.subf(b.const(0.0, f32), arith.divf(mn, scale))))
    y = b.map_elementwise([x], b.dims(x), u8, lambda v: arith.fptoui(
        u8, clamp255(arith.addf(math.roundeven(arith.divf(v, scale)), zp))))
    return [y, tensor.from_elements(ir.RankedTensorType.get([], f32), [scale]),
            tensor.from_elements(ir.RankedTensorType.get([], u8), [arith.fptoui(u8, zp)])]
