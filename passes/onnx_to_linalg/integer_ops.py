"""MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv -> i32 linalg
contractions on zero-point-shifted operands (one elementwise generic each:
ext(x) - ext(zp), zp broadcast per tensor / per row / per column / per
output channel), then for QLinear* a requantize generic:
``clamp(roundeven(f32(acc) * (s_x * s_w / s_y)) + zp_y)``, all in the
scales' float type (f32), as onnxruntime's CPU kernels requantize
(MlasRequantizeOutput): the same bits as onnxruntime's QLinearConv /
QLinearMatMul. (onnx.reference multiplies in f64; the two differ by one
step only where the f32 product rounds across a .5 boundary: about one
element in 10^5..10^6.)

Convolutions pad the shifted input with 0, i.e. with the zero point of the
original input, as ONNX requires.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.conv import convolve
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, wrap
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.gemm import _matmul


def i32():
    return ir.IntegerType.get_signless(32)


def bcast_exprs(v: ir.Value, n: int, loop_1d: int) -> list:
    """Indexing exprs of a broadcast operand ``v`` inside an n-loop generic:
    0-D / one element -> constant; 1-D -> loop ``loop_1d``; rank n -> numpy
    broadcasting (static size-1 dims -> 0)."""
    t = v.type
    if t.rank == 0:
        return []
    if t.rank == 1:
        if not t.is_dynamic_dim(0) and t.shape[0] == 1:
            return ["0"]
        return [loop_1d]
    off = n - t.rank
    return ["0" if (not t.is_dynamic_dim(k) and t.shape[k] == 1) else off + k
            for k in range(t.rank)]


def fit(op: OnnxOp, b: LoweringContext, v: ir.Value, dims: list, loop_1d: int) -> ir.Value:
    """``v`` (indexed by ``bcast_exprs``) with its dynamic dims that are 1 at
    run time broadcast to the loop extents ``dims``: a per-tensor zero point
    or scale of unknown size ``[?]`` is read at index 0, not per row. Other
    sizes must be the loop extent (a run-time check)."""
    t = v.type
    if t.rank == 1:
        pairs, target = [(0, dims[loop_1d])], [dims[loop_1d]]
    elif t.rank > 1 and t.rank == len(dims):
        pairs, target = list(enumerate(dims)), dims
    else:
        return v
    chk = checks(op, b)
    for j, d in pairs:
        if t.is_dynamic_dim(j):
            dv, do = b.ixdim(v, j), wrap(d)
            chk.require(D.either(D.eq(dv, do), D.eq(dv, 1)),
                        f"a zero point or scale has {{0}} elements on axis {j}, "
                        f"expected 1 or {{1}}", dv, do)
    return runtime_broadcast(b, v, target, t.rank, {})


def ext_i32(b: LoweringContext, x: ir.Value, unsigned: bool) -> ir.Value:
    w = x.type.width
    if w == 32:
        return x
    if w > 32:
        return arith.trunci(i32(), x)
    return arith.extui(i32(), x) if unsigned else arith.extsi(i32(), x)


def shifted(op: OnnxOp, b: LoweringContext, x: ir.Value, zp: ir.Value | None,
            loop_1d: int) -> ir.Value:
    """i32 tensor ext(x) - ext(zp)."""
    n = x.type.rank
    ux = b.unsigned(x)
    ident = affine_map(n, list(range(n)))
    out = b.empty(b.dims(x), i32())
    if zp is None:
        return b.generic([x], [out], [ident, ident], ["parallel"] * n,
                         lambda v, _o: ext_i32(b, v, ux))[0]
    if zp.type.rank not in (0, 1, n):
        op.fail(f"zero point of rank {zp.type.rank} does not fit an input of rank {n}")
    uz = b.unsigned(zp)
    zp = fit(op, b, zp, b.dims(x), loop_1d)
    zmap = affine_map(n, bcast_exprs(zp, n, loop_1d))
    return b.generic([x, zp], [out], [ident, zmap, ident], ["parallel"] * n,
                     lambda v, z, _o: arith.subi(ext_i32(b, v, ux), ext_i32(b, z, uz)))[0]


def matmul_i32(op: OnnxOp, b: LoweringContext, a: ir.Value, w: ir.Value) -> ir.Value:
    """numpy matmul of i32 operands, structured like MatMul's (gemm._matmul:
    an N-D A times a 2-D B is one 2-D ``linalg.matmul`` on A with its
    leading dims collapsed, which the -O3 int8 kernels match)."""
    out_t = ir.RankedTensorType.get(list(b.result_type(op).shape), i32())
    return _matmul(op, b, a, w, out_t)


def conv_i32(op: OnnxOp, b: LoweringContext, x: ir.Value, w: ir.Value,
             bias: ir.Value | None = None) -> ir.Value:
    """N-D convolution of shifted i32 operands (zero padding); ``bias`` is
    only checked (QLinearConv adds it when requantizing)."""
    return convolve(op, b, x, w, bias, i32(), add_bias=False)


def requantize(op: OnnxOp, b: LoweringContext, acc: ir.Value, sx: ir.Value, sx_1d: int,
               sw: ir.Value, sw_1d: int, sy: ir.Value, zy: ir.Value | None,
               bias: ir.Value | None = None) -> ir.Value:
    """clamp(roundeven(f(acc + bias) * (sx * sw / sy)) + zy) -> result type, in
    the scales' float type f (onnxruntime's requantization: rounded before
    the zero point is added, so no addition rounds)."""
    out_t = b.result_type(op)
    et = out_t.element_type
    if not isinstance(et, ir.IntegerType) or et.width != 8:
        op.fail(f"only 8-bit integer results are supported, got {et}")
    unsigned = b.unsigned(zy) if zy is not None else lost_unsigned(op)
    lo, hi = (0, (1 << et.width) - 1) if unsigned else (-(1 << (et.width - 1)),
                                                        (1 << (et.width - 1)) - 1)
    n = acc.type.rank
    f64, f32 = ir.F64Type.get(), ir.F32Type.get()
    dims = b.dims(acc)
    sx, sw, sy = (fit(op, b, sx, dims, sx_1d), fit(op, b, sw, dims, sw_1d),
                  fit(op, b, sy, dims, 0))
    if zy is not None:
        zy = fit(op, b, zy, dims, 0)
    ins = [acc, sx, sw, sy]
    maps = [affine_map(n, list(range(n))), affine_map(n, bcast_exprs(sx, n, sx_1d)),
            affine_map(n, bcast_exprs(sw, n, sw_1d)), affine_map(n, bcast_exprs(sy, n, 0))]
    if zy is not None:
        ins.append(zy)
        maps.append(affine_map(n, bcast_exprs(zy, n, 0)))
    if bias is not None:
        ins.append(bias)
        maps.append(affine_map(n, [1]))
    maps.append(affine_map(n, list(range(n))))
    st = sx.type.element_type
    if not all(isinstance(s.type.element_type, (ir.F16Type, ir.F32Type, ir.F64Type)) and
               s.type.element_type == st for s in (sx, sw, sy)):
        op.fail("scales must share one float type (f16/f32/f64)")

    def body(*args):
        a, x_s, w_s, y_s = args[:4]
        rest = list(args[4:-1])
        z = rest.pop(0) if zy is not None else None
        if bias is not None:
            a = arith.addi(a, rest.pop(0))
        mult = arith.divf(arith.mulf(x_s, w_s), y_s)
        ft = f32 if st != f64 else f64          # f16 scales: f32, as onnxruntime widens them
        if st != ft:
            mult = arith.extf(ft, mult)
        v = math.roundeven(arith.mulf(arith.sitofp(ft, a), mult))
        if z is not None:
            v = arith.addf(v, arith.uitofp(ft, z) if unsigned else arith.sitofp(ft, z))
        v = arith.maximumf(v, arith.constant(ft, float(lo)))
        v = arith.minimumf(v, arith.constant(ft, float(hi)))
        return arith.fptoui(et, v) if unsigned else arith.fptosi(et, v)
    return b.generic(ins, [b.empty(b.dims(acc), et)], maps, ["parallel"] * n, body)[0]


def lost_unsigned(op: OnnxOp) -> bool:
    et = op.op.results[0].type.element_type
    return isinstance(et, ir.IntegerType) and et.is_unsigned


@lowering("MatMulInteger", 10)
def lower_matmul_integer(op: OnnxOp, b: LoweringContext):
    a, w = op.input(0), op.input(1)
    ra, rw = b.ranked(op, a).rank, b.ranked(op, w).rank
    if ra < 1 or rw < 1:
        op.fail("A and B must have rank >= 1")
    a32 = shifted(op, b, a, op.input(2), max(ra - 2, 0))
    w32 = shifted(op, b, w, op.input(3), rw - 1)
    return [matmul_i32(op, b, a32, w32)]


@lowering("ConvInteger", 10)
def lower_conv_integer(op: OnnxOp, b: LoweringContext):
    x, w = op.input(0), op.input(1)
    b.ranked(op, x), b.ranked(op, w)
    x32 = shifted(op, b, x, op.input(2), 1)
    w32 = shifted(op, b, w, op.input(3), 0)  # per output channel
    return [conv_i32(op, b, x32, w32)]


@lowering("QLinearMatMul", 10, 21)
def lower_qlinear_matmul(op: OnnxOp, b: LoweringContext):
    a, sa, za, w, sw, zw, sy, zy = (op.input(i) for i in range(8))
    ra, rw = b.ranked(op, a).rank, b.ranked(op, w).rank
    if ra < 2 or rw < 2:
        op.fail("A and B must have rank >= 2")
    acc = matmul_i32(op, b, shifted(op, b, a, za, ra - 2), shifted(op, b, w, zw, rw - 1))
    n = acc.type.rank
    return [requantize(op, b, acc, sa, n - 2, sw, n - 1, sy, zy)]


@lowering("QLinearConv", 10)
def lower_qlinear_conv(op: OnnxOp, b: LoweringContext):
    x, sx, zx, w, sw, zw, sy, zy = (op.input(i) for i in range(8))
    bias = op.input(8)
    b.ranked(op, x), b.ranked(op, w)
    acc = conv_i32(op, b, shifted(op, b, x, zx, 1), shifted(op, b, w, zw, 0), bias)
    return [requantize(op, b, acc, sx, 1, sw, 1, sy, zy, bias)]
