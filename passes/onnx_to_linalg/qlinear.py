"""com.microsoft QLinear ops -> linalg, computed as onnxruntime's x86-64 CPU
kernels compute them (AVX2/FMA machines), so the integer outputs are the same
bit for bit. The arithmetic, step by step (f32 unless said otherwise; "fma"
is one rounding):

* QLinearAdd (MLAS QLinearAddKernelAvx2): ``rA = sA/sC``, ``rB = sB/sC``,
  ``F = zC - fma(rA, zA, rB*zB)``, ``C = fma(A, rA, fma(B, rB, F))``.
  Where onnxruntime's broadcaster calls the kernel with input 0 as the
  per-span scalar (A's innermost deciding dim is 1, see ``_input0_scalar``;
  known at run time only for dynamic dims), A and B swap roles: ``F' = zC -
  fma(rB, zB, rA*zA)``, ``C = fma(B, rB, fma(A, rA, F'))``.
* QLinearMul (MLAS qlmul.cpp, SSE2): ``C = ((A-zA)*(B-zB)) * (sA*sB/sC) + zC``
  (the product exact in i32, then a multiply and an add).
  Both round half to even and saturate like ``cvtps2dq`` + saturating packs
  (a value past the i32 range becomes the type's minimum).
* QLinearGlobalAveragePool (MLAS qlgavgpool.cpp): the i32 sum minus
  ``zX * N``, times ``sX / (sY * N)``, clamped to the range minus zY, rounded
  half to even, plus zY; onnxruntime refuses an image of 2^24 cells or more
  and a scale outside [2^-32, 256) (run-time checks here).
* QLinearAveragePool (qlinear_pool.cc): the global pool above when the
  kernel covers the unpadded image; else each window's dequantized values
  ``sX * (x - zX)`` summed in window order (h, w, d), divided by the cell
  count (the kernel size with count_include_pad), then
  ``nearbyint(y / sY + zY)`` clamped.
* QLinearConcat: each input ``quantize(sX * (x - zX))`` (MLAS QuantizeLinear:
  ``/ sY``, clamp, round half to even, ``+ zY``), or copied when its scale
  and zero point are Y's; then Concat (concat_split.py).
* QLinearSigmoid / QLinearLeakyRelu (a 256-entry table in onnxruntime,
  computed per element here, the same values): dequantize, MLAS's FMA3
  logistic polynomial / ``v >= 0 ? v : alpha * v``, MLAS QuantizeLinear.
* QLinearSoftmax (qlinear_softmax.cc, MLAS QSoftmax): X's zero point is not
  used. Per row of D elements (D = X's dim ``axis``; opset < 13: the product
  of the dims from ``axis`` on), ``e(x) = (float)exp((x - max + bs) * sX)``
  in f64 with ``bs = max(0, logf(FLT_MAX / D) - 5) / sX``; the e summed in
  f32 in row order; ``Y = nearbyint(e * floor(1 / sY) / sum)`` in f64, plus
  zY, clamped. (Established against onnxruntime 1.32 itself: the MLAS
  QSoftmax kernels in its public sources sum in vector lanes and multiply by
  a reciprocal, which gives other integers next to ties; the 1.32 build's
  results are those above, on 72M random elements and on rows built to sit
  on ties, the latter in the tests.)

Float sums whose order the result depends on (pool windows, softmax rows)
are generics whose reduction loop is not the innermost one: the -O3
row-reduction vectorizer (passes/optimize/elementwise.py) reassociates only
a trailing reduction, so they stay in order.
"""
from __future__ import annotations

import numpy as np

import mlir.ir as ir
from mlir.dialects import arith, math, scf, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.qlinear import (MS, concat_triples, input_name,
                                                    qpool_axes, qpool_window, softmax_axis,
                                                    spatial_positions)
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, pad)
from onnx_mlir_py.passes.onnx_to_linalg.concat_split import concat_values
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, fit_result, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.integer_ops import ext_i32
from onnx_mlir_py.passes.onnx_to_linalg.reshape import dims_product, expand, reshape_with_shape
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, loop_index,
                                                            norm_axis)

CF = arith.CmpFPredicate
CI = arith.CmpIPredicate


def _f32():
    return ir.F32Type.get()


def _f64():
    return ir.F64Type.get()


def _i32():
    return ir.IntegerType.get_signless(32)


def _i8():
    return ir.IntegerType.get_signless(8)


def _fc(x: float, et=None) -> ir.Value:
    return arith.constant(et or _f32(), float(x))


# -- parameters ----------------------------------------------------------------------

def _scalar(op: OnnxOp, b: LoweringContext, v: ir.Value, name: str) -> ir.Value:
    """The one element of a per-tensor scale / zero point (a 1-D one of
    dynamic length is checked at run time, as onnxruntime does)."""
    t = b.ranked(op, v, f"input '{name}'")
    if t.rank > 1 or (t.rank == 1 and not t.is_dynamic_dim(0) and t.shape[0] != 1):
        op.fail(f"input '{name}' has shape {list(t.shape)}: expected a scalar or a 1-D tensor "
                f"of one element (onnxruntime supports per-tensor quantization only)")
    if t.rank == 1 and t.is_dynamic_dim(0):
        n = b.ixdim(v, 0)
        checks(op, b).require(D.eq(n, 1), f"input '{name}' has {{0}} elements: expected one "
                              f"(per-tensor quantization)", n)
    return tensor.extract(v, [b.index(0)] * t.rank)


def _scale(op: OnnxOp, b: LoweringContext, i: int) -> ir.Value:
    return _scalar(op, b, op.input(i), input_name(op, i))


def _zero_point(op: OnnxOp, b: LoweringContext, v: ir.Value | None, name: str,
                et: ir.Type) -> ir.Value:
    """A zero point as ``et`` (f32 / f64 / i32); 0 when absent."""
    if v is None:
        return b.const(0, et)
    return convert_scalar(_scalar(op, b, v, name), b.unsigned(v), et)


def _zp(op: OnnxOp, b: LoweringContext, i: int, et: ir.Type) -> ir.Value:
    return _zero_point(op, b, op.input(i), input_name(op, i), et)


def _result_range(op: OnnxOp) -> tuple[bool, int, int]:
    """(unsigned, lowest, highest) of the 8-bit result type."""
    et = op.op.results[0].type.element_type
    if not isinstance(et, ir.IntegerType) or et.width != 8:
        op.fail(f"result element type {et} is not an 8-bit integer type")
    uns = et.is_unsigned
    return (True, 0, 255) if uns else (False, -128, 127)


def _to_f32(v: ir.Value, uns: bool) -> ir.Value:
    return arith.uitofp(_f32(), v) if uns else arith.sitofp(_f32(), v)


def _to_i8(r: ir.Value, uns: bool) -> ir.Value:
    """An integral float in the 8-bit range -> i8."""
    return arith.fptoui(_i8(), r) if uns else arith.fptosi(_i8(), r)


def _clamp(v: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """``min(max(v, lo), hi)`` as x86's maxps / minps: a NaN gives ``lo``."""
    v = arith.select(arith.cmpf(CF.OGT, v, lo), v, lo)
    return arith.select(arith.cmpf(CF.OLT, v, hi), v, hi)


def _cvt_saturate(v: ir.Value, lo: int, hi: int, uns: bool) -> ir.Value:
    """``cvtps2dq`` (round half to even; NaN or out of the i32 range gives
    INT_MIN) then saturating packs to 8 bits."""
    et = v.type
    r = math.roundeven(v)
    r = arith.minimumf(arith.maximumf(r, _fc(lo, et)), _fc(hi, et))
    ok = arith.cmpf(CF.OLT, v, _fc(2.0 ** 31, et))
    return _to_i8(arith.select(ok, r, _fc(lo, et)), uns)


def _mlas_quantize(v: ir.Value, zy: ir.Value, lo: int, hi: int, uns: bool) -> ir.Value:
    """MLAS's QuantizeLinear / RequantizeOutput after the scaling: clamp to
    [lo - zY, hi - zY], round half to even, add zY (``zy``: f32)."""
    c = _clamp(v, arith.subf(_fc(lo), zy), arith.subf(_fc(hi), zy))
    return _to_i8(arith.addf(math.roundeven(c), zy), uns)


def _dequantize(b: LoweringContext, x: ir.Value, uns: bool, sx: ir.Value,
                zx: ir.Value) -> ir.Value:
    """``sX * (float)(x - zX)`` of an i8 element (``zx``: i32)."""
    return arith.mulf(sx, arith.sitofp(_f32(), arith.subi(ext_i32(b, x, uns), zx)))


# -- QLinearAdd / QLinearMul ---------------------------------------------------------

def _le1(d):
    return d <= 1 if isinstance(d, int) else \
        arith.cmpi(CI.sle, d, arith.constant(ir.IndexType.get(), 1))


def _gt1(d):
    return d > 1 if isinstance(d, int) else \
        arith.cmpi(CI.sgt, d, arith.constant(ir.IndexType.get(), 1))


def _i1(c) -> ir.Value:
    return c if isinstance(c, ir.Value) else \
        arith.constant(ir.IntegerType.get_signless(1), int(bool(c)))


def _or(a, c):
    if isinstance(a, bool):
        return True if a else c
    if isinstance(c, bool):
        return True if c else a
    return arith.ori(a, c)


def _select(c, x, y):
    if isinstance(c, bool):
        return x if c else y
    if isinstance(x, bool) and isinstance(y, bool) and x == y:
        return x
    return arith.select(c, _i1(x), _i1(y))


def _input0_scalar(b: LoweringContext, a: ir.Value, bb: ir.Value):
    """Whether onnxruntime's broadcaster (element_wise_ops.h ``Broadcaster``)
    makes input 0 the scalar of each span, so that QLinearAdd runs MLAS's
    kernel with B first: A is a scalar, or, walking the common dims from the
    innermost, A's dim is <= 1 at the first one where A or B is > 1 (or at
    the outermost common dim when there is none); with B a scalar, A's last
    dim is <= 1. A Python bool, or an i1 when dynamic dims decide it."""
    da, db = b.dims(a), b.dims(bb)
    if not da:
        return True
    if not db:
        return _le1(da[-1])
    mn = min(len(da), len(db))
    res = _le1(da[-mn])
    for p in range(mn - 2, -1, -1):
        a1, a2 = da[-1 - p], db[-1 - p]
        res = _select(_or(_gt1(a1), _gt1(a2)), _le1(a1), res)
    return res


@lowering("QLinearAdd", 1, domain=MS)
def lower_qlinear_add(op: OnnxOp, b: LoweringContext):
    a, bb = op.input(0), op.input(3)
    b.ranked(op, a, "input 'A'"), b.ranked(op, bb, "input 'B'")
    uns, lo, hi = _result_range(op)
    f32 = _f32()
    sa, sb, sc = _scale(op, b, 1), _scale(op, b, 4), _scale(op, b, 6)
    za, zb, zc = _zp(op, b, 2, f32), _zp(op, b, 5, f32), _zp(op, b, 7, f32)
    ra, rb = arith.divf(sa, sc), arith.divf(sb, sc)
    fixed_ab = arith.subf(zc, math.fma(ra, za, arith.mulf(rb, zb)))
    fixed_ba = arith.subf(zc, math.fma(rb, zb, arith.mulf(ra, za)))
    swap = _input0_scalar(b, a, bb)
    if isinstance(swap, bool):
        r1, r2, fixed = (rb, ra, fixed_ba) if swap else (ra, rb, fixed_ab)
    else:
        r1, r2 = arith.select(swap, rb, ra), arith.select(swap, ra, rb)
        fixed = arith.select(swap, fixed_ba, fixed_ab)
    ua, ub = b.unsigned(a), b.unsigned(bb)

    def body(av, bv):
        af, bf = _to_f32(av, ua), _to_f32(bv, ub)
        if isinstance(swap, bool):
            x1, x2 = (bf, af) if swap else (af, bf)
        else:
            x1, x2 = arith.select(swap, bf, af), arith.select(swap, af, bf)
        return _cvt_saturate(math.fma(x1, r1, math.fma(x2, r2, fixed)), lo, hi, uns)
    return [broadcast_generic(op, b, [a, bb], body)]


@lowering("QLinearMul", 1, domain=MS)
def lower_qlinear_mul(op: OnnxOp, b: LoweringContext):
    a, bb = op.input(0), op.input(3)
    b.ranked(op, a, "input 'A'"), b.ranked(op, bb, "input 'B'")
    uns, lo, hi = _result_range(op)
    i32 = _i32()
    sa, sb, sc = _scale(op, b, 1), _scale(op, b, 4), _scale(op, b, 6)
    za, zb = _zp(op, b, 2, i32), _zp(op, b, 5, i32)
    zc = _zp(op, b, 7, _f32())
    ratio = arith.divf(arith.mulf(sa, sb), sc)
    ua, ub = b.unsigned(a), b.unsigned(bb)

    def body(av, bv):
        p = arith.muli(arith.subi(ext_i32(b, av, ua), za), arith.subi(ext_i32(b, bv, ub), zb))
        v = arith.addf(arith.mulf(arith.sitofp(_f32(), p), ratio), zc)
        return _cvt_saturate(v, lo, hi, uns)
    return [broadcast_generic(op, b, [a, bb], body)]


# -- global average pool -------------------------------------------------------------

def _global_average(op: OnnxOp, b: LoweringContext, x: ir.Value, channels_last: int,
                    sx, zx, sy, zy) -> ir.Value:
    """MLAS's QLinearGlobalAveragePool of ``x`` (``zx`` i32, ``zy`` f32): the
    result in x's layout with its spatial dims 1 (static)."""
    uns_x = b.unsigned(x)
    uns, lo, hi = _result_range(op)
    r = x.type.rank
    dims = b.dims(x)
    sp, c = spatial_positions(r, channels_last)
    n, ch = dims[0], dims[c]
    image = dims_product(b, [dims[k] for k in sp])
    i64 = ir.IntegerType.get_signless(64)
    image_i64 = b.const(image, i64) if isinstance(image, int) else arith.index_cast(i64, image)
    scale = arith.divf(sx, arith.mulf(sy, arith.sitofp(_f32(), image_i64)))
    ok = arith.andi(arith.cmpi(CI.slt, image_i64, b.const(1 << 24, i64)),
                    arith.andi(arith.cmpf(CF.OGE, scale, _fc(2.0 ** -32)),
                               arith.cmpf(CF.OLT, scale, _fc(256.0))))
    b.require(ok, f"node '{op.name}' ({op.op_type}): the image has {{0}} cells and "
              f"x_scale / (y_scale * cells) is outside [2^-32, 256), or the image has 2^24 "
              f"cells or more (onnxruntime refuses it: parameter out of computation range)",
              image_i64)
    if channels_last:
        xc = reshape_with_shape(b, x, [n, image, ch])
        x_map = affine_map(3, [0, 2, 1])
    else:
        xc = reshape_with_shape(b, x, [n, ch, image])
        x_map = affine_map(3, [0, 1, 2])
    i32 = _i32()
    acc = b.generic([xc], [b.full([n, ch], i32, 0)], [x_map, affine_map(3, [0, 1])],
                    ["parallel", "parallel", "reduction"],
                    lambda v, s: arith.addi(s, ext_i32(b, v, uns_x)))[0]
    bias = arith.muli(zx, arith.trunci(i32, image_i64))

    def body(s):
        v = arith.mulf(arith.sitofp(_f32(), arith.subi(s, bias)), scale)
        return _mlas_quantize(v, zy, lo, hi, uns)
    y = b.map_elementwise([acc], [n, ch], _i8(), body)
    out = [n] + [1] * (r - 2) + [ch] if channels_last else [n, ch] + [1] * (r - 2)
    return expand(b, y, [[0], list(range(1, r))], out)


@lowering("QLinearGlobalAveragePool", 1, domain=MS)
def lower_qlinear_global_average_pool(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x, "input 'X'").rank < 3:
        op.fail("input 'X' must have rank >= 3")
    f32 = _f32()
    y = _global_average(op, b, x, op.attrs.channels_last, _scale(op, b, 1),
                        _zp(op, b, 2, _i32()), _scale(op, b, 3), _zp(op, b, 4, f32))
    return [b.cast_to(y, b.result_type(op))]


# -- average pool --------------------------------------------------------------------

def _layout(logical: list, channels_last: int) -> list:
    """[n, c, spatial...] -> x's order."""
    return [logical[0]] + logical[2:] + [logical[1]] if channels_last else list(logical)


def _window_sum(b: LoweringContext, xp: ir.Value, win, out_dims: list,
                channels_last: int) -> ir.Value:
    """out[n, c, o] = sum over the window (k in row-major order) of
    xp[n, c, o*s + k]: loops (n, c, k..., o...), the reductions before the
    output's spatial loops so that the f32 sum keeps its order at -O3."""
    ns = len(win.kernel)
    nd = 2 + 2 * ns
    E = ir.AffineDimExpr.get
    sp = [ir.AffineExpr.get_add(
        ir.AffineExpr.get_mul(E(2 + ns + i), ir.AffineConstantExpr.get(win.strides[i])),
        E(2 + i)) for i in range(ns)]
    in_map = ir.AffineMap.get(nd, 0, _layout([E(0), E(1)] + sp, channels_last))
    out_map = ir.AffineMap.get(nd, 0, _layout([E(0), E(1)] + [E(2 + ns + i) for i in range(ns)],
                                              channels_last))
    w = b.empty(list(win.kernel), _f32())
    return b.generic([xp, w], [b.full(out_dims, _f32(), 0.0)],
                     [in_map, affine_map(nd, list(range(2, 2 + ns))), out_map],
                     ["parallel"] * 2 + ["reduction"] * ns + ["parallel"] * ns,
                     lambda v, _w, acc: arith.addf(acc, v))[0]


def _float_average(op: OnnxOp, b: LoweringContext, x: ir.Value, win, axes, out_dims: list,
                   sx, zx, sy, zy) -> ir.Value:
    """qlinear_pool.cc's float path (a window not the whole image)."""
    cl = op.attrs.channels_last
    uns_x = b.unsigned(x)
    uns, lo, hi = _result_range(op)
    r = x.type.rank
    sp, _c = spatial_positions(r, cl)
    sizes = [b.ixdim(x, k) for k in sp]
    deq = b.map_elementwise([x], b.dims(x), _f32(), lambda v: _dequantize(b, v, uns_x, sx, zx))
    # zeros around the image (they add nothing to a window's sum): P before,
    # E after; a negative begin pad (SAME with a kernel smaller than the
    # stride) moves the windows right by -pad_begin instead
    low, high, offs = [0] * r, [0] * r, [0] * r
    for i, (k, a) in enumerate(zip(sp, axes)):
        before = D.dmax(a.pad_begin, 0)
        shift = before - a.pad_begin
        last = (a.out - 1) * win.strides[i] + win.kernel[i] + shift
        low[k], offs[k] = index_of(before), index_of(shift)
        high[k] = index_of(D.dmax(last - sizes[i] - before, 0))
    xp = pad(b, deq, low, high, 0.0)
    if any(not (isinstance(o, int) and o == 0) for o in offs):
        pdims = b.dims(xp)
        xp = extract_slice(b, xp, offs, [d if isinstance(o, int) and o == 0 else
                                         arith.subi(b.as_index(d), b.as_index(o))
                                         for d, o in zip(pdims, offs)])
    total = _window_sum(b, xp, win, out_dims, cl)
    if op.attrs.count_include_pad:
        count = _fc(float(np.prod(win.kernel)))

        def cells():
            return count
    else:
        def cells():
            n = 1
            for i, (k, a) in enumerate(zip(sp, axes)):
                start = wrap(loop_index(k)) * win.strides[i] - a.pad_begin
                n = n * (D.dmin(start + win.kernel[i], sizes[i]) - D.dmax(start, 0))
            i64 = ir.IntegerType.get_signless(64)
            return arith.sitofp(_f32(), arith.index_cast(i64, b.as_index(index_of(n))))

    def body(s):
        y = arith.divf(s, cells())
        q = math.roundeven(arith.addf(arith.divf(y, sy), zy))
        ok = arith.andi(arith.cmpf(CF.OLT, q, _fc(2.0 ** 31)),
                        arith.cmpf(CF.OGE, q, _fc(-2.0 ** 31)))
        q = arith.minimumf(arith.maximumf(q, _fc(lo)), _fc(hi))
        return _to_i8(arith.select(ok, q, _fc(lo)), uns)
    return b.map_elementwise([total], out_dims, _i8(), body)


@lowering("QLinearAveragePool", 1, domain=MS)
def lower_qlinear_average_pool(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x, "input 'X'").rank
    if r < 3:
        op.fail("input 'X' must have rank >= 3")
    cl = op.attrs.channels_last
    sp, c = spatial_positions(r, cl)
    win = qpool_window(op, len(sp))
    xd = b.ixdims(x)
    axes = qpool_axes(win, checks(op, b), [xd[k] for k in sp])
    logical = [xd[0], xd[c]] + [a.out for a in axes]
    out_dims = [index_of(d) for d in fit_result(op, b, _layout(logical, cl))]
    f32, i32 = _f32(), _i32()
    sx, zx, sy = _scale(op, b, 1), _zp(op, b, 2, i32), _scale(op, b, 3)
    zy = _zp(op, b, 4, f32)
    res_t = b.result_type(op)
    # onnxruntime takes the global pool's integer path when the kernel is
    # the image and no pad is left (qlinear_pool.cc ``fallback_to_global``)
    whole = True
    for i, (k, a) in enumerate(zip(sp, axes)):
        whole = D.both(whole, D.both(D.eq(xd[k], win.kernel[i]),
                                     D.both(D.eq(a.pad_begin, 0), D.eq(a.pad_end, 0))))

    def global_path():
        return b.cast_to(_global_average(op, b, x, cl, sx, zx, sy, zy), res_t)

    def float_path():
        return b.cast_to(_float_average(op, b, x, win, axes, out_dims, sx, zx, sy, zy), res_t)
    if isinstance(whole, bool):
        return [global_path() if whole else float_path()]
    if_op = scf.IfOp(whole.value, [res_t], has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([global_path()])
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp([float_path()])
    return [if_op.results[0]]


# -- QLinearConcat -------------------------------------------------------------------

@lowering("QLinearConcat", 1, domain=MS)
def lower_qlinear_concat(op: OnnxOp, b: LoweringContext):
    triples = concat_triples(op)
    uns, lo, hi = _result_range(op)
    f32, i32 = _f32(), _i32()
    sy = _scalar(op, b, op.input(0), "Y_scale")
    yz = op.input(1)
    zy = _zero_point(op, b, yz, "Y_zero_point", f32)
    zy_i = _zero_point(op, b, yz, "Y_zero_point", i32)
    ins = []
    for j, (x, s, z) in enumerate(triples):
        b.ranked(op, x, f"X of input #{j}")
        sx = _scalar(op, b, s, f"X_scale of input #{j}")
        zx = _zero_point(op, b, z, f"X_zero_point of input #{j}", i32)
        # onnxruntime copies an input whose scale and zero point are Y's
        same = arith.andi(arith.cmpf(CF.OEQ, sx, sy), arith.cmpi(CI.eq, zx, zy_i))
        ux = b.unsigned(x)

        def body(v, sx=sx, zx=zx, same=same, ux=ux):
            q = _mlas_quantize(arith.divf(_dequantize(b, v, ux, sx, zx), sy), zy, lo, hi, uns)
            return arith.select(same, v, q)
        ins.append(b.map_elementwise([x], b.dims(x), _i8(), body))
    r = ins[0].type.rank
    if any(v.type.rank != r for v in ins):
        op.fail("the X inputs must have the same rank")
    if r == 0:
        op.fail("cannot concatenate scalars (the X inputs have rank 0)")
    return [concat_values(op, b, ins, norm_axis(op, op.attrs.axis, r))]


# -- QLinearSigmoid / QLinearLeakyRelu -----------------------------------------------

# MLAS's logistic constants (logistic.cpp MlasLogisticConstants), as f32
_LOGISTIC = {k: float(np.float32(v)) for k, v in dict(
    lower=-18.0, upper=18.0, a9=4.37031012579801e-11, a7=1.15627324459942e-07,
    a5=6.08574864600143e-05, a3=8.51377133304701e-03, a1=2.48287947061529e-01,
    b10=6.10247389755681e-13, b8=5.76102136993427e-09, b6=6.29106785017040e-06,
    b4=1.70198817374094e-03, b2=1.16817656904453e-01, b0=9.93151921023180e-01).items()}


def mlas_logistic(x: ir.Value) -> ir.Value:
    """MLAS's logistic (MlasComputeLogisticF32KernelFma3): x clamped to
    [-18, 18], ``x * p(x^2) / q(x^2) + 0.5`` (Horner in FMAs), then >= 0."""
    c = {k: _fc(v) for k, v in _LOGISTIC.items()}
    x = arith.select(arith.cmpf(CF.OGT, c["lower"], x), c["lower"], x)
    x = arith.select(arith.cmpf(CF.OLT, c["upper"], x), c["upper"], x)
    x2 = arith.mulf(x, x)
    p = math.fma(x2, c["a9"], c["a7"])
    for k in ("a5", "a3", "a1"):
        p = math.fma(x2, p, c[k])
    q = math.fma(x2, c["b10"], c["b8"])
    for k in ("b6", "b4", "b2", "b0"):
        q = math.fma(x2, q, c[k])
    v = arith.addf(arith.divf(arith.mulf(x, p), q), _fc(0.5))
    zero = _fc(0.0)
    return arith.select(arith.cmpf(CF.OGT, zero, v), zero, v)


def _lookup_activation(op: OnnxOp, b: LoweringContext, fn) -> ir.Value:
    x = op.input(0)
    b.ranked(op, x, "input 'X'")
    uns, lo, hi = _result_range(op)
    sx, zx = _scale(op, b, 1), _zp(op, b, 2, _i32())
    sy, zy = _scale(op, b, 3), _zp(op, b, 4, _f32())
    ux = b.unsigned(x)

    def body(v):
        return _mlas_quantize(arith.divf(fn(_dequantize(b, v, ux, sx, zx)), sy), zy, lo, hi, uns)
    return b.map_elementwise([x], b.dims(x), _i8(), body)


@lowering("QLinearSigmoid", 1, domain=MS)
def lower_qlinear_sigmoid(op: OnnxOp, b: LoweringContext):
    return [_lookup_activation(op, b, mlas_logistic)]


@lowering("QLinearLeakyRelu", 1, domain=MS)
def lower_qlinear_leaky_relu(op: OnnxOp, b: LoweringContext):
    def leaky(v):
        neg = arith.mulf(_fc(op.attrs.alpha), v)
        return arith.select(arith.cmpf(CF.OGE, v, _fc(0.0)), v, neg)
    return [_lookup_activation(op, b, leaky)]


# -- QLinearSoftmax ------------------------------------------------------------------

def _softmax_rows(op: OnnxOp, b: LoweringContext, x: ir.Value, ux: bool, axis: int, sx, sy,
                  zy):
    """QLinearSoftmax along ``axis`` of ``x`` (elements unsigned when ``ux``;
    see the module docstring)."""
    uns, lo, hi = _result_range(op)
    r = x.type.rank
    dims = b.dims(x)
    others = [k for k in range(r) if k != axis]
    red_dims = [dims[k] for k in others]
    ident = affine_map(r, list(range(r)))
    to_row = affine_map(r, others)
    i8, i32, f32, f64 = _i8(), _i32(), _f32(), _f64()
    # the row maxima (integer: any order)
    low = 0 if ux else -128
    maxf = arith.maxui if ux else arith.maxsi
    m = b.generic([x], [b.full(red_dims, i8, low)], [ident, to_row],
                  ["reduction" if k == axis else "parallel" for k in range(r)],
                  lambda v, acc: maxf(acc, v))[0]
    # onnxruntime's table of exp(x - max) for the 256 differences (f64 exp;
    # logf and the table outside the generics: libm's, as onnxruntime's)
    n = dims[axis]
    i64 = ir.IntegerType.get_signless(64)
    n_f = arith.uitofp(f32, b.const(n, i64) if isinstance(n, int) else arith.index_cast(i64, n))
    log_q = math.log(arith.divf(_fc(float(np.finfo(np.float32).max)), n_f))
    t = arith.subf(arith.extf(f64, log_q), _fc(5.0, f64))
    t = arith.select(arith.cmpf(CF.OLT, _fc(0.0, f64), t), t, _fc(0.0, f64))
    sx64 = arith.extf(f64, sx)
    shift = arith.divf(t, sx64)

    def entry(_o):
        j = arith.sitofp(f64, arith.index_cast(i64, loop_index(0)))
        d = arith.subf(j, _fc(255.0, f64))
        return arith.truncf(f32, math.exp(arith.mulf(arith.addf(d, shift), sx64)))
    table = b.generic([], [b.empty([256], f32)], [affine_map(1, [0])], ["parallel"], entry)[0]

    def lookup(v, mx):
        k = arith.addi(arith.subi(ext_i32(b, v, ux), ext_i32(b, mx, ux)), b.const(255, i32))
        return tensor.extract(table, [arith.index_cast(ir.IndexType.get(), k)])
    # the row sums in row order: the reduction loop first (see the module docstring)
    E = ir.AffineDimExpr.get
    pos = [E(0)] * r
    for j, k in enumerate(others):
        pos[k] = E(1 + j)
    pos[axis] = E(0)
    x_map = ir.AffineMap.get(r, 0, pos)
    row_map = affine_map(r, list(range(1, r)))
    total = b.generic([x, m], [b.full(red_dims, f32, 0.0)], [x_map, row_map, row_map],
                      ["reduction"] + ["parallel"] * (r - 1),
                      lambda v, mx, acc: arith.addf(acc, lookup(v, mx)))[0]
    ys = arith.extf(f64, math.floor(arith.divf(_fc(1.0), sy)))
    zy64 = arith.extf(f64, zy)

    def body(v, mx, s, _o):
        q = arith.divf(arith.mulf(arith.extf(f64, lookup(v, mx)), ys), arith.extf(f64, s))
        q = arith.addf(math.roundeven(q), zy64)
        q = arith.minimumf(arith.maximumf(q, _fc(lo, f64)), _fc(hi, f64))
        return _to_i8(q, uns)
    return b.generic([x, m, total], [b.empty(dims, i8)], [ident, to_row, to_row, ident],
                     ["parallel"] * r, body)[0]


@lowering("QLinearSoftmax", 1, domain=MS)
def lower_qlinear_softmax(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x, "input 'X'").rank
    if r == 0:
        op.fail("input 'X' is a scalar: expected rank >= 1")
    axis = softmax_axis(op, r)
    sx, sy = _scale(op, b, 1), _scale(op, b, 3)      # (x_zero_point: not used)
    zy = _zp(op, b, 4, _f32())
    ux = b.unsigned(x)
    if op.attrs.opset >= 13:
        return [b.cast_to(_softmax_rows(op, b, x, ux, axis, sx, sy, zy), b.result_type(op))]
    # opset < 13: the rows are X coerced to 2-D at axis
    dims = b.dims(x)
    x2 = reshape_with_shape(b, x, [dims_product(b, dims[:axis]), dims_product(b, dims[axis:])])
    y2 = _softmax_rows(op, b, x2, ux, 1, sx, sy, zy)
    return [b.cast_to(reshape_with_shape(b, y2, dims), b.result_type(op))]
