"""DFT -> one linalg.generic: a direct O(n^2) DFT (correct, not fast: no
FFT), the result dims parallel and the summed signal index a reduction.

out[.., f, .., :] = sum_t x[.., t, ..] * exp(-+2 pi i f t / n) (t below the
signal's size and n: a shorter signal is zero-padded, a longer one
truncated); the inverse divides by n. The inverse of a one-sided spectrum
(irfft) is real: sum over the n//2+1 first frequencies of w_k (Re X_k cos -
Im X_k sin), w_k = 1 for k = 0 and k = n/2, else 2 (numpy.fft.irfft). The
angle is taken from (f * t) mod n and everything is computed in f64, then
rounded to the signal's type. An axis given at run time (v20's input) is
range-checked and picked inside the body; the dims come from
dialects/onnx/ops/dft.py::dft_length.

STFT is the same direct DFT per frame (windowed); MelWeightMatrix one
generic over [dft_length // 2 + 1, num_mel_bins] (both below).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.dft import dft_axis, dft_length, stft_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np, loop_index, scalar_of, to_index

I = arith.CmpIPredicate


@lowering("DFT", 17, 20)
def lower_dft(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if not is_float(et):
        op.fail(f"the signal must be floating-point (got {et})")
    inverse, onesided = bool(op.attrs.inverse), bool(op.attrs.onesided)
    chk = checks(op, b)
    a = dft_axis(op, r)
    if a is None:   # v20, the axis an input known at run time
        av = wrap(to_index(scalar_of(b, op.input(2))))
        chk.require(D.both(D.ge(av, -r), D.lt(av, r)),
                    f"axis {{0}} is out of range [-{r}, {r - 1}]", av)
        av = D.select(D.lt(av, 0), av + r, av)
        chk.require(D.lt(av, r - 1), "axis {0} is the complex dim of the signal", av)
        axis = index_of(av)
        n_in = wrap(tensor.dim(x, axis))
    else:
        axis = a
        n_in = b.ixdim(x, a)
    length = None
    if op.input(1) is not None:
        length = wrap(to_index(scalar_of(b, op.input(1))))
    n, n_out = dft_length(chk, n_in, length, inverse, onesided)
    xd = b.ixdims(x)
    last = 1 if (inverse and onesided) else 2
    out = []
    for k in range(r - 1):
        out.append(n_out if axis == k else
                   (xd[k] if isinstance(axis, int) else D.select(D.eq(wrap(axis), k), n_out, xd[k])))
    out.append(last)
    out_dims = [index_of(d) for d in out]
    # the summed index: t (forward/inverse) or the frequency k (irfft)
    terms = D.dmin(n // 2 + 1 if (inverse and onesided) else n, n_in)
    bound = b.empty([index_of(terms)], et)
    comp = xd[r - 1]
    chk.require(D.either(D.eq(comp, 1), D.eq(comp, 2)),
                "the signal's last dim is {0}: expected 1 (real) or 2 (complex)", comp)
    complex_in = not D.is_static(comp) or comp == 2
    # the imaginary part's index: 1, or 0 (then unused) for a real signal at run time
    im_ix = b.as_index(index_of(comp - 1)) if not D.is_static(comp) else None
    f64 = ir.F64Type.get()
    nv = b.as_index(index_of(n))
    axis_v = b.as_index(axis)
    two_pi = b.const(6.283185307179586, f64)

    def f(v):
        return arith.sitofp(f64, arith.index_cast(ir.IntegerType.get_signless(64), v))

    def body(_bound, acc):
        ivs = [loop_index(k) for k in range(r)]
        t = loop_index(r)
        on = [arith.cmpi(I.eq, axis_v, b.index(k)) for k in range(r - 1)]
        fr = ivs[0]
        for k in range(1, r - 1):
            fr = arith.select(on[k], ivs[k], fr)
        src = [arith.select(on[k], t, ivs[k]) for k in range(r - 1)]
        re = convert_scalar(tensor.extract(x, src + [b.index(0)]), False, f64)
        im = b.const(0.0, f64)
        if complex_in:
            im = convert_scalar(tensor.extract(x, src + [im_ix or b.index(1)]), False, f64)
            if im_ix is not None:
                im = arith.select(arith.cmpi(I.eq, im_ix, b.index(1)), im, b.const(0.0, f64))
        ang = arith.divf(arith.mulf(two_pi, f(arith.remui(arith.muli(fr, t), nv))), f(nv))
        c, s = math.cos(ang), math.sin(ang)
        if inverse and onesided:
            even = arith.cmpi(I.eq, arith.remui(nv, b.index(2)), b.index(0))
            single = arith.ori(arith.cmpi(I.eq, t, b.index(0)), arith.andi(
                even, arith.cmpi(I.eq, arith.muli(t, b.index(2)), nv)))
            w = arith.select(single, b.const(1.0, f64), b.const(2.0, f64))
            val = arith.mulf(w, arith.subf(arith.mulf(re, c), arith.mulf(im, s)))
            val = arith.divf(val, f(nv))
            return arith.addf(acc, val)
        sign = 1.0 if inverse else -1.0
        s = arith.mulf(s, b.const(sign, f64))
        comp = ivs[r - 1]
        # (re + i im)(c + i s) = (re c - im s) + i (re s + im c)
        v_re = arith.subf(arith.mulf(re, c), arith.mulf(im, s))
        v_im = arith.addf(arith.mulf(re, s), arith.mulf(im, c))
        val = arith.select(arith.cmpi(I.eq, comp, b.index(0)), v_re, v_im)
        if inverse:
            val = arith.divf(val, f(nv))
        return arith.addf(acc, val)
    init = b.full(out_dims, f64, 0.0)
    maps = [affine_map(r + 1, [r]), affine_map(r + 1, list(range(r)))]
    y = b.generic([bound], [init], maps, ["parallel"] * r + ["reduction"], body)[0]
    y = b.map_elementwise([y], out_dims, et, lambda v: convert_scalar(v, False, et))
    return [b.cast_to(y, b.result_type(op))]


# -- STFT -------------------------------------------------------------------------
# out[b, f, k, :] = sum_{t < n} x[b, f step + t] w[t] exp(-2 pi i k t / n): one
# generic over (b, f, k, re/im, t), t a reduction; f64 sums, rounded once.

def _scalar_dim(b: LoweringContext, op: OnnxOp, i: int):
    """Input ``i``'s one value: an int if constant, else a run-time index."""
    c = const_np(op.input(i))
    if c is not None and c.size == 1:
        return int(c.reshape(-1)[0])
    return wrap(to_index(scalar_of(b, op.input(i))))


@lowering("STFT", 17)
def lower_stft(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 3:
        op.fail("signal must have rank 3 ([batch, length, 1 or 2])")
    et = x.type.element_type
    if not is_float(et):
        op.fail(f"the signal must be floating-point (got {et})")
    onesided = bool(op.attrs.onesided)
    chk = checks(op, b)
    xd = b.ixdims(x)
    step = _scalar_dim(b, op, 1)
    win = op.input(2)
    if op.input(3) is not None:
        length = _scalar_dim(b, op, 3)
        if win is not None:
            chk.require(D.eq(b.ixdim(win, 0), length),
                        "the window has length {0}: expected frame_length = {1}",
                        b.ixdim(win, 0), length)
    else:
        length = b.ixdim(win, 0) if win is not None else None
    n, frames, bins = stft_dims(chk, xd[1], step, length, onesided)
    comp = xd[2]
    chk.require(D.either(D.eq(comp, 1), D.eq(comp, 2)),
                "the signal's last dim is {0}: expected 1 (real) or 2 (complex)", comp)
    if onesided:
        chk.require(D.eq(comp, 1), "onesided = 1 needs a real signal (last dim {0})", comp)
    complex_in = not D.is_static(comp) or comp == 2
    im_ix = b.as_index(index_of(comp - 1)) if not D.is_static(comp) else None
    f64 = ir.F64Type.get()
    nv, stepv = b.as_index(index_of(n)), b.as_index(index_of(step))
    two_pi = b.const(6.283185307179586, f64)
    out_dims = [index_of(d) for d in (xd[0], frames, bins, 2)]

    def f(v):
        return arith.sitofp(f64, arith.index_cast(ir.IntegerType.get_signless(64), v))

    def body(*args):
        acc = args[-1]
        bi, fr, k, c, t = (loop_index(i) for i in range(5))
        pos = arith.addi(arith.muli(fr, stepv), t)
        re = convert_scalar(tensor.extract(x, [bi, pos, b.index(0)]), False, f64)
        im = b.const(0.0, f64)
        if complex_in:
            im = convert_scalar(tensor.extract(x, [bi, pos, im_ix or b.index(1)]), False, f64)
            if im_ix is not None:
                im = arith.select(arith.cmpi(I.eq, im_ix, b.index(1)), im, b.const(0.0, f64))
        if win is not None:
            w = convert_scalar(args[0], False, f64)
            re, im = arith.mulf(re, w), arith.mulf(im, w)
        ang = arith.divf(arith.mulf(two_pi, f(arith.remui(arith.muli(k, t), nv))), f(nv))
        cs, sn = math.cos(ang), arith.negf(math.sin(ang))
        v_re = arith.subf(arith.mulf(re, cs), arith.mulf(im, sn))
        v_im = arith.addf(arith.mulf(re, sn), arith.mulf(im, cs))
        return arith.addf(acc, arith.select(arith.cmpi(I.eq, c, b.index(0)), v_re, v_im))
    bound = win if win is not None else b.empty([index_of(n)], et)
    init = b.full(out_dims, f64, 0.0)
    maps = [affine_map(5, [4]), affine_map(5, [0, 1, 2, 3])]
    y = b.generic([bound], [init], maps, ["parallel"] * 4 + ["reduction"], body)[0]
    y = b.map_elementwise([y], out_dims, et, lambda v: convert_scalar(v, False, et))
    return [b.cast_to(y, b.result_type(op))]


# -- MelWeightMatrix ----------------------------------------------------------------
# onnx.reference's triangles: the edges m_k = low_mel + k (high_mel - low_mel) /
# (bins + 2) (mel = 2595 log10(1 + hz / 700)) -> bin e_k = floor((dft_length + 1)
# hz(m_k) / sample_rate); column i rises from e_i to e_{i+1} and falls to
# e_{i+2}. numpy's precisions are kept: hz / 700, log1p and * 2595 in the edge
# type (f32 rounded from f64), the rest in f64.

def _log1p64(t):
    """log(1 + t), accurate near 0 (Goldberg's correction, as unary.py)."""
    one = arith.constant(t.type, 1.0)
    u = arith.addf(one, t)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, u, one), t,
                        arith.mulf(math.log(u), arith.divf(t, arith.subf(u, one))))


def _expm1_64(x):
    """exp(x) - 1, accurate near 0 (Kahan: (u - 1) x / log u for |x| <= 0.5)."""
    one = arith.constant(x.type, 1.0)
    u = math.exp(x)
    um1 = arith.subf(u, one)
    big = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(x), arith.constant(x.type, 0.5))
    small = arith.mulf(um1, arith.divf(x, math.log(u)))
    return arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, u, one), x,
                        arith.select(big, um1, small))


@lowering("MelWeightMatrix", 17)
def lower_mel_weight_matrix(op: OnnxOp, b: LoweringContext):
    f64 = ir.F64Type.get()
    i64 = ir.IntegerType.get_signless(64)
    dims_in = [_scalar_dim(b, op, i) for i in range(3)]   # ints when constant
    nb, nl, rv = dims_in
    ints = [b.const(d, i64) if isinstance(d, int) else arith.index_cast(i64, index_of(d))
            for d in dims_in]
    bins_i, n_i, rate_i = ints
    chk = checks(op, b)
    chk.require(D.ge(nb, 1), "num_mel_bins is {0}: expected >= 1", nb)
    chk.require(D.ge(nl, 1), "dft_length is {0}: expected >= 1", nl)
    chk.require(D.ge(rv, 1), "sample_rate is {0}: expected >= 1", rv)
    rt = b.result_type(op)
    dims = [rt.shape[0] if not rt.is_dynamic_dim(0) else index_of(nl // 2 + 1),
            rt.shape[1] if not rt.is_dynamic_dim(1) else index_of(nb)]
    if not rt.is_dynamic_dim(0):   # a static type must be the run-time size
        chk.require(D.eq(nl // 2 + 1, rt.shape[0]), "dft_length {0} does not match the "
                    f"result type's {rt.shape[0]} rows", nl)
    if not rt.is_dynamic_dim(1):
        chk.require(D.eq(nb, rt.shape[1]), "num_mel_bins {0} does not match the "
                    f"result type's {rt.shape[1]} columns", nb)
    et_edge = op.input(3).type.element_type

    def mel(hz):   # 2595 * log1p(hz / 700) in the edge type, then / ln 10 in f64
        h = convert_scalar(hz, False, f64)
        if et_edge != f64:
            def rnd(v):
                return convert_scalar(convert_scalar(v, False, et_edge), False, f64)
        else:
            def rnd(v):
                return v
        t = rnd(arith.divf(rnd(h), b.const(700.0, f64)))
        m = rnd(arith.mulf(b.const(2595.0, f64), rnd(_log1p64(t))))
        return arith.divf(m, b.const(2.302585092994046, f64))
    lo = mel(scalar_of(b, op.input(3)))
    hi = mel(scalar_of(b, op.input(4)))
    step = arith.divf(arith.subf(hi, lo), arith.sitofp(f64, arith.addi(bins_i, b.const(2, i64))))
    n1 = arith.sitofp(f64, arith.addi(n_i, b.const(1, i64)))
    rate = arith.sitofp(f64, rate_i)

    def edge(k):   # index -> i64 bin
        m = arith.addf(arith.mulf(arith.sitofp(f64, arith.index_cast(i64, k)), step), lo)
        hz = arith.mulf(b.const(700.0, f64), _expm1_64(arith.mulf(
            arith.divf(m, b.const(2595.0, f64)), b.const(2.302585092994046, f64))))
        return arith.fptosi(i64, math.floor(arith.divf(arith.mulf(n1, hz), rate)))
    out_et = rt.element_type

    # the bins + 2 edges once, then one generic over the matrix
    edges = b.generic([], [b.empty([index_of(nb + 2)], i64)], [affine_map(1, [0])],
                      ["parallel"], lambda _o: edge(loop_index(0)))[0]

    def body(_o):
        j = arith.index_cast(i64, loop_index(0))
        i = loop_index(1)
        e0, e1, e2 = (tensor.extract(edges, [arith.addi(i, b.index(k))]) for k in range(3))
        zero, one = b.const(0.0, f64), b.const(1.0, f64)
        def ratio(p, q):
            return arith.divf(arith.sitofp(f64, p), arith.sitofp(f64, q))
        up = ratio(arith.subi(j, e0), arith.subi(e1, e0))
        in_up = arith.andi(arith.cmpi(I.sge, j, e0), arith.cmpi(I.sle, j, e1))
        v = arith.select(arith.cmpi(I.eq, e0, e1), arith.select(
            arith.cmpi(I.eq, j, e1), one, zero), arith.select(in_up, up, zero))
        down = ratio(arith.subi(e2, j), arith.subi(e2, e1))
        in_down = arith.andi(arith.cmpi(I.sge, j, e1), arith.cmpi(I.slt, j, e2))
        v = arith.select(in_down, down, v)
        return convert_scalar(v, False, out_et)
    y = b.generic([], [b.empty(dims, out_et)], [affine_map(2, [0, 1])], ["parallel"] * 2, body)[0]
    return [b.cast_to(y, rt)]
