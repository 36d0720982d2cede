"""com.microsoft quantized matmuls: QGemm, DynamicQuantizeMatMul, MatMulIntegerToFloat, MatMulNBits.

Each computes what onnxruntime's CPU kernel computes (checked bit for bit
against it where the kernel is exact):

* QGemm: acc = C + (A - a_zp) @ (B - b_zp) in int32 (zero-point-shifted
  operands, integer_ops.shifted; the transposes on the shifted i32 tensors);
  scale = alpha * a_scale * b_scale[n] (/ y_scale) in f32, in that order.
  Float output: f32(acc) * scale. Quantized output (MLAS's requantize):
  clamp(roundeven(f32(acc) * scale) + y_zp) to y's range, all in f32.
* MatMulIntegerToFloat: f32(acc) * (a_scale * b_scale[n]) + bias[n], acc the
  int32 numpy matmul of the shifted operands (gemm._matmul); float16 scales
  are widened and the result rounded once (as onnxruntime).
* DynamicQuantizeMatMul: A quantized to uint8 by DynamicQuantizeLinear's
  lowering (quantize.py: onnxruntime's GetQuantizationParameter and
  MlasQuantizeLinear compute the same scale, zero point and values), then as
  MatMulIntegerToFloat with that scale and zero point.
* MatMulNBits: the weights dequantized at run time into an f32 [K, N] tensor
  by one generic ((q - zp) * scale, q and packed zero points unpacked with
  shifts, low bits first), then A @ W (gemm._matmul: N-D A collapsed into one
  2-D matmul) and the bias; float16 A is widened and the result rounded
  once. The computation is f32 whatever accuracy_level says: onnxruntime at
  accuracy_level 4 quantizes A to int8 per block (constant 4-/8-bit weights
  with uint8 or no zero points), so its results differ by up to ~1e-2 of
  max |Y| there. (Dequantizing constant weights at compile time is not done.)
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_quant_matmul import (MS, b_param_ok, nbits_empty_b,
                                                            nbits_layout)
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.gemm import _matmul, matmul2d, transpose2d
from onnx_mlir_py.passes.onnx_to_linalg.integer_ops import shifted
from onnx_mlir_py.passes.onnx_to_linalg.quantize import lower_dynamic_quantize_linear
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index


def _i32():
    return ir.IntegerType.get_signless(32)


def _f32():
    return ir.F32Type.get()


def _to_f32(v: ir.Value) -> ir.Value:
    return v if v.type == _f32() else arith.extf(_f32(), v)


def _static_one(op: OnnxOp, b: LoweringContext, v: ir.Value | None, what: str):
    """A one-element parameter (scalar or [1]); a dynamic [?] is checked to
    be 1 at run time and given the static type (its ONNX type kept)."""
    if v is None:
        return None
    t = b.ranked(op, v, what)
    if t.rank == 1 and t.is_dynamic_dim(0):
        d = b.ixdim(v, 0)
        checks(op, b).require(D.eq(d, 1), f"{what} has {{0}} elements, expected 1", d)
        c = b.cast_to(v, ir.RankedTensorType.get([1], t.element_type))
        b.record(c, b.onnx_elem(v))
        return c
    return v


def _scalar(v: ir.Value) -> ir.Value:
    """The one element of a static scalar / [1] tensor."""
    return tensor.extract(v, [arith.constant(ir.IndexType.get(), 0)] * v.type.rank)


def _is_one(v: ir.Value) -> bool:
    t = v.type
    return t.rank == 0 or (t.rank == 1 and not t.is_dynamic_dim(0) and t.shape[0] == 1)


def _per_column(op: OnnxOp, b: LoweringContext, p: ir.Value | None, w: ir.Value, what: str):
    """A b_scale / b_zero_point: the same value, or for a 2-D B a [1, N] one
    as [N]; one whose layout onnxruntime would not apply per column inside
    its GEMM (dynamic dims that decide it included) is refused."""
    if p is None:
        return None
    b.ranked(op, p, what)
    ps, ws = op.shape(p), op.shape(w)
    ok = b_param_ok(ps, ws)
    if ok is None and not (len(ps) == 1 and len(ws) == 2):
        op.fail(f"{what} of shape {list(ps)} with B of shape {list(ws)}: dynamic dims decide "
                f"whether it is per column; not supported")
    if ok is False:
        op.fail(f"{what} of shape {list(ps)} is not supported with B of shape {list(ws)}")
    if len(ps) == 2 and len(ws) == 2:
        c = collapse(p, [[0, 1]], ir.RankedTensorType.get([p.type.shape[1]],
                                                           p.type.element_type))
        b.record(c, b.onnx_elem(p))
        return c
    return p


# -- MatMulIntegerToFloat / DynamicQuantizeMatMul ------------------------------------

def _float_epilogue(op: OnnxOp, b: LoweringContext, acc: ir.Value, scale, per_col,
                    bias: ir.Value | None) -> ir.Value:
    """Y = f32(acc) * (scale * per_col[n]) + bias[n] (f32, rounded once to
    Y's type); ``scale``: an f32 scalar value, ``per_col``: a scale tensor
    or None."""
    et = b.result_type(op).element_type
    out_rank = b.result_type(op).rank
    ins = [acc]
    for v in (per_col, bias):
        if v is not None:
            if v.type.rank > out_rank:
                op.fail(f"a parameter of rank {v.type.rank} does not fit the result of rank "
                        f"{out_rank}; not supported")
            ins.append(v)

    def body(a, *rest):
        rest = list(rest)
        mult = scale
        if per_col is not None:
            mult = arith.mulf(mult, _to_f32(rest.pop(0)))
        y = arith.mulf(arith.sitofp(_f32(), a), mult)
        if bias is not None:
            y = arith.addf(y, _to_f32(rest.pop(0)))
        return y if et == _f32() else arith.truncf(et, y)
    return broadcast_generic(op, b, ins, body)


def _integer_to_float(op: OnnxOp, b: LoweringContext, a: ir.Value, a_zp, a_scale: ir.Value,
                      w: ir.Value, b_scale: ir.Value, b_zp, bias) -> ir.Value:
    """The shared body: ``a_scale`` an f32 scalar value; the rest tensors."""
    ra, rw = b.ranked(op, a).rank, b.ranked(op, w).rank
    if ra < 1 or rw < 2:
        op.fail("A must have rank >= 1 and B rank >= 2")
    b_zp = _per_column(op, b, b_zp, w, "b_zero_point")
    b_scale = _per_column(op, b, b_scale, w, "b_scale")
    a32 = shifted(op, b, a, a_zp, max(ra - 2, 0))
    w32 = shifted(op, b, w, b_zp, rw - 1)
    out_t = ir.RankedTensorType.get(list(b.result_type(op).shape), _i32())
    acc = _matmul(op, b, a32, w32, out_t)
    if _is_one(b_scale):
        return _float_epilogue(op, b, acc, arith.mulf(a_scale, _to_f32(_scalar(b_scale))),
                               None, bias)
    return _float_epilogue(op, b, acc, a_scale, b_scale, bias)


@lowering("MatMulIntegerToFloat", 1, domain=MS)
def lower_matmul_integer_to_float(op: OnnxOp, b: LoweringContext):
    a, w = op.input(0), op.input(1)
    a_scale = _static_one(op, b, op.input(2), "a_scale")
    a_zp = _static_one(op, b, op.input(4), "a_zero_point")
    if not _is_one(a_scale) or (a_zp is not None and not _is_one(a_zp)):
        op.fail("a_scale and a_zero_point must have one element")
    return [_integer_to_float(op, b, a, a_zp, _to_f32(_scalar(a_scale)), w, op.input(3),
                              op.input(5), op.input(6))]


@lowering("DynamicQuantizeMatMul", 1, domain=MS)
def lower_dynamic_quantize_matmul(op: OnnxOp, b: LoweringContext):
    # DynamicQuantizeLinear's lowering reads only input 0 (A) of ``op``
    q, scale, zp = lower_dynamic_quantize_linear(op, b)
    u8 = ir.IntegerType.get_unsigned(8)
    b.record(q, u8)
    b.record(zp, u8)
    return [_integer_to_float(op, b, q, zp, tensor.extract(scale, []), op.input(1),
                              op.input(2), op.input(3), op.input(4))]


# -- QGemm ------------------------------------------------------------------------------

@lowering("QGemm", 1, domain=MS)
def lower_qgemm(op: OnnxOp, b: LoweringContext):
    a, w, c = op.input(0), op.input(3), op.input(6)
    for v in (a, w):
        if b.ranked(op, v).rank != 2:
            op.fail("A and B must be 2-D")
    ta, tb = bool(op.attrs.transA), bool(op.attrs.transB)
    a_scale = _static_one(op, b, op.input(1), "a_scale")
    a_zp = _static_one(op, b, op.input(2), "a_zero_point")
    y_scale = _static_one(op, b, op.input(7), "y_scale")
    y_zp = _static_one(op, b, op.input(8), "y_zero_point")
    b_scale, b_zp = op.input(4), op.input(5)
    for v, what in ((b_scale, "b_scale"), (b_zp, "b_zero_point")):
        if b.ranked(op, v, what).rank > 1:
            op.fail(f"{what} must be a scalar or 1-D")
    n_axis = 0 if tb else 1              # B's dim of the output columns
    a32 = shifted(op, b, a, a_zp, 0)
    w32 = shifted(op, b, w, b_zp, n_axis)
    if ta:
        a32 = transpose2d(b, a32)
    if tb:
        w32 = transpose2d(b, w32)
    require_same_dim(op, b, a32, 1, w32, 0, "A", "B")
    acc = matmul2d(b, a32, w32, _i32())
    alpha = float(op.attrs.alpha)
    et = b.result_type(op).element_type
    quant = y_zp is not None
    if quant:
        if not isinstance(et, ir.IntegerType) or et.width != 8:
            op.fail(f"the result type must be 8-bit with y_zero_point, got {et}")
        unsigned = b.unsigned(y_zp)
        lo, hi = (0, 255) if unsigned else (-128, 127)
    elif et != _f32():
        op.fail(f"the result type must be float without y_zero_point, got {et}")
    if c is not None and b.ranked(op, c, "C").rank > 2:
        op.fail("C must have rank <= 2")
    per_col = None if _is_one(b_scale) else b_scale
    f32 = _f32()
    # the output scale as onnxruntime computes it: (alpha * a_scale) * b_scale (/ y_scale)
    s0 = arith.mulf(arith.constant(f32, alpha), _scalar(a_scale))
    if per_col is None:
        s0 = arith.mulf(s0, _scalar(b_scale))
    sy = _scalar(y_scale) if y_scale is not None else None
    zy = None
    if quant:
        zv = _scalar(y_zp)
        zy = arith.extui(_i32(), zv) if unsigned else arith.extsi(_i32(), zv)
        zf = arith.sitofp(f32, zy)
        lo_f = arith.subf(arith.constant(f32, float(lo)), zf)
        hi_f = arith.subf(arith.constant(f32, float(hi)), zf)
    ins = [acc] + [v for v in (c, per_col) if v is not None]

    def body(x, *rest):
        rest = list(rest)
        if c is not None:
            x = arith.addi(x, rest.pop(0))
        s = s0 if per_col is None else arith.mulf(s0, rest.pop(0))
        if sy is not None:
            s = arith.divf(s, sy)
        v = arith.mulf(arith.sitofp(f32, x), s)
        if not quant:
            return v
        v = math.roundeven(arith.minimumf(arith.maximumf(v, lo_f), hi_f))
        return arith.trunci(et, arith.addi(arith.fptosi(_i32(), v), zy))
    return [broadcast_generic(op, b, ins, body)]


# -- MatMulNBits --------------------------------------------------------------------------

def _require_dims(op: OnnxOp, b: LoweringContext, v: ir.Value, want: list[int], what: str):
    chk = checks(op, b)
    for j, e in enumerate(want):
        if v.type.is_dynamic_dim(j):
            d = b.ixdim(v, j)
            chk.require(D.eq(d, e), f"{what} dim {j} is {{0}}, expected {e}", d)


NBITS_ATTR = "om.nbits"      # [bits, block_size, K, N, zero-point form] on the dequant generic


def _nbits_weights(op: OnnxOp, b: LoweringContext) -> ir.Value:
    """The dequantized weights, f32 [K, N]: W[k, n] = (q - zp) * scale of
    k's block, q the bits-wide field (k mod per_byte) of byte (k mod
    block_size) / per_byte of block k / block_size in B's row n."""
    k, n, bits, bs, kb, blob = nbits_layout(op)
    w, sc, zp = op.input(1), op.input(2), op.input(3)
    per = 8 // bits
    mask = (1 << bits) - 1
    _require_dims(op, b, w, [n, kb, blob], "B")
    sc_rank = b.ranked(op, sc, "scales").rank
    _require_dims(op, b, sc, [n, kb] if sc_rank == 2 else [n * kb], "scales")
    zp_packed = zp is not None and isinstance(b.onnx_elem(zp), ir.IntegerType)
    zb = -(-kb * bits // 8)
    if zp is not None:
        z_rank = b.ranked(op, zp, "zero_points").rank
        zn = zb if zp_packed else kb
        _require_dims(op, b, zp, [n, zn] if z_rank == 2 else [n * zn], "zero_points")

    K_, N_ = ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)

    def c(x):
        return ir.AffineConstantExpr.get(x)

    def fd(e, x):
        return ir.AffineExpr.get_floor_div(e, c(x))

    blk = fd(K_, bs)
    maps = [ir.AffineMap.get(2, 0, [N_, blk, fd(ir.AffineExpr.get_mod(K_, c(bs)), per)])]
    ins = [w]
    maps.append(ir.AffineMap.get(2, 0, [N_, blk] if sc_rank == 2 else [N_ * c(kb) + blk]))
    ins.append(sc)
    if zp is not None:
        zcol = fd(blk, per) if zp_packed else blk
        zw = zb if zp_packed else kb
        maps.append(ir.AffineMap.get(2, 0, [N_, zcol] if zp.type.rank == 2
                                     else [N_ * c(zw) + zcol]))
        ins.append(zp)
    maps.append(ir.AffineMap.get(2, 0, [K_, N_]))
    f32, i32 = _f32(), _i32()

    def field(byte, index, shift_of):
        """bits-wide field of ``byte`` at position (index mod per)."""
        v = arith.extui(i32, byte)
        if bits == 8:
            return v
        ki = arith.index_cast(i32, index)
        sh = arith.muli(arith.remui(shift_of(ki), arith.constant(i32, per)),
                        arith.constant(i32, bits))
        return arith.andi(arith.shrui(v, sh), arith.constant(i32, mask))

    def body(q, s, *rest):
        kk = loop_index(0)
        qv = arith.uitofp(f32, field(q, kk, lambda x: x))
        if zp is None:
            z = arith.constant(f32, float(1 << (bits - 1)))
        elif zp_packed:
            z = arith.uitofp(f32, field(rest[0], kk,
                                        lambda x: arith.divui(x, arith.constant(i32, bs))))
        else:
            z = _to_f32(rest[0])
        return arith.mulf(arith.subf(qv, z), _to_f32(s))
    out = b.empty([k, n], f32)
    w = b.generic(ins, [out], maps, ["parallel", "parallel"], body)[0]
    # for -O3's nbits_decode kernel (passes/optimize/matmul_nbits.py): what this
    # generic dequantizes; zero-point form 0 none, 1 packed uint8, 2 float
    w.owner.attributes[NBITS_ATTR] = ir.DenseI64ArrayAttr.get(
        [bits, bs, k, n, 0 if zp is None else 1 if zp_packed else 2])
    return w


@lowering("MatMulNBits", 1, domain=MS)
def lower_matmul_n_bits(op: OnnxOp, b: LoweringContext):
    a, bias = op.input(0), op.input(5)
    k, n = op.attrs.K, op.attrs.N
    ra = b.ranked(op, a).rank
    if ra < 1:
        op.fail("A must have rank >= 1")
    if op.input(4) is not None:
        op.fail("input 'g_idx' is not supported")
    out_t = b.result_type(op)
    et = out_t.element_type
    if str(et) not in ("f32", "f16"):
        op.fail(f"element type {et} is not supported (float and float16 only)")
    if bias is not None:
        _require_dims(op, b, bias, [n], "bias")
    f32 = _f32()
    if nbits_empty_b(op):
        # an omitted projection: Y = 0 (+ bias), A's values unused
        checks(op, b).require(D.eq(b.ixdim(a, ra - 1), k),
                              f"A's last dim is {{0}}, expected K = {k}", b.ixdim(a, ra - 1))
        y = b.full(b.dims(a)[:-1] + [n], et, 0.0)
        if bias is None:
            return [y]
        return [broadcast_generic(op, b, [y, bias], arith.addf)]
    wq = _nbits_weights(op, b)
    if et != f32:
        a = b.map_elementwise([a], b.dims(a), f32, lambda x: arith.extf(f32, x))
    y = _matmul(op, b, a, wq, ir.RankedTensorType.get(list(out_t.shape), f32))
    if bias is None and et == f32:
        return [y]
    ins = [y] if bias is None else [y, bias]

    def body(v, *rest):
        if rest:
            v = arith.addf(v, _to_f32(rest[0]))
        return v if et == f32 else arith.truncf(et, v)
    return [broadcast_generic(op, b, ins, body)]
