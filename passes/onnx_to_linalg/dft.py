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
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.dft import dft_axis, dft_length
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, wrap
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, scalar_of, to_index

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
