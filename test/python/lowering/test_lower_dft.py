"""DFT (a direct O(n^2) DFT) against onnx.reference in f64 (numpy.fft):
forward real/complex input, one-sided, inverse, irfft with even and odd
lengths, dft_length padding and truncating, the axis as an attribute (v17)
and as a run-time input (v20, also out of range); dynamic dims, two
run-time shapes each. The inverse also against numpy.fft in f64 at f32 and
f64 (one f32 rounding of the result), with the node tests' ramp input."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h, numpy_helper

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(0)


def _x(*s):
    return R.standard_normal(s)


@pytest.mark.parametrize("inverse,onesided,comp", [(0, 0, 1), (0, 0, 2), (0, 1, 1), (1, 0, 2),
                                                   (1, 1, 2)])
@pytest.mark.parametrize("length", [None, 6, 7])
def test_dft_v17(tmp_path, inverse, onesided, comp, length):
    inits = [] if length is None else [numpy_helper.from_array(np.array(length, np.int64), "n")]
    m = model([h.make_node("DFT", ["x", "n" if length else ""], ["y"], axis=1,
                           inverse=inverse, onesided=onesided)],
              [("x", T.DOUBLE, ["b", "t", comp])], opset=17, inits=inits)
    feeds = [{"x": _x(2, 5, comp)}, {"x": _x(1, 8, comp)}]
    check_shapes(tmp_path, m, feeds, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("inverse,onesided", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_dft_v20_runtime_axis(tmp_path, inverse, onesided):
    m = model([h.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse, onesided=onesided)],
              [("x", T.FLOAT, ["a", "b", 2]), ("axis", T.INT64, [])], opset=20)
    feeds = [{"x": _x(3, 4, 2).astype(np.float32), "axis": np.array(a, np.int64)}
             for a in (0, 1, -2, -3)]
    check_shapes(tmp_path, m, feeds, rtol=1e-4, atol=1e-4)


def test_dft_dynamic_complex_dim(tmp_path):
    """The last dim (1 real / 2 complex) known only at run time."""
    m = model([h.make_node("DFT", ["x"], ["y"], axis=1, inverse=1)],
              [("x", T.DOUBLE, ["b", "t", "c"])], opset=17)
    check_shapes(tmp_path, m, [{"x": _x(2, 5, 2)}, {"x": _x(1, 4, 1)}], rtol=1e-9, atol=1e-9)


def test_dft_v20_axis_out_of_range(tmp_path):
    m = model([h.make_node("DFT", ["x", "", "axis"], ["y"], name="dft")],
              [("x", T.FLOAT, [3, 4, 2]), ("axis", T.INT64, [])], opset=20)
    check_rejects(tmp_path, m, [{"x": _x(3, 4, 2).astype(np.float32),
                                 "axis": np.array(a, np.int64)} for a in (2, 3, -4)],
                  match=r"dft.*axis -?\d+ (is out of range|is the complex dim)")


# -- the inverse DFT against numpy.fft in f64 --------------------------------
# The node tests test_dft_inverse(_opset19) expect, for ifft of the ramp
# x[t, j] = 10 t + j (complex64) along t (n = 10), an imaginary part of
# 1.9073e-07 at the Nyquist frequency f = 5 where the exact value is 0
# (sum_t (10 t + j)(-1)^t / 10 = -5, real): numpy >= 2 computes a complex64
# FFT in float32, and onnx generates the expected data with the installed
# numpy. We give ~3e-15 there (f64 sums rounded once to f32), which fails the
# test's own atol 1e-7 (and its rtol 1e-3). These tests pin our inverse
# against a float64 numpy.fft at a tolerance of one f32 rounding of the result.
def _sig(shape, comp, dt):
    return R.standard_normal((*shape, comp)).astype(dt)


def _ifft64(x, axis, n=None, onesided=False):
    """numpy.fft's inverse in f64 of the ONNX signal x ([..., 1|2])."""
    x = x.astype(np.float64)
    xc = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)
    if onesided:
        return np.fft.irfft(xc, n=n, axis=axis)[..., None]
    y = np.fft.ifft(xc, n=n, axis=axis)
    return np.stack((y.real, y.imag), axis=-1)


def _close64(got, want, dt):
    """got (f32/f64) against an f64 reference: one rounding of the result to
    f32 (rtol 2^-23), f64 round-off otherwise; absolute 1e-12 of the scale."""
    assert got.dtype == dt and got.shape == want.shape, (got.dtype, got.shape, want.shape)
    rtol = 2.0 ** -23 if dt == np.float32 else 1e-12
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol,
                               atol=1e-12 * max(1.0, np.abs(want).max()))


def _run(tmp_path, m, feeds):
    from dynamic_util import session
    return session(m, tmp_path).run(feeds)[0]


_TY = {np.float32: T.FLOAT, np.float64: T.DOUBLE}


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("comp", [1, 2])
@pytest.mark.parametrize("shape,axis", [((2, 8, 3), 1), ((2, 3, 10), 2), ((7, 4), 0)])
def test_dft_inverse_vs_numpy(tmp_path, dt, comp, shape, axis):
    """Lengths 8 (power of two), 10, 7; the axis first, middle and last of the
    signal dims; real and complex input."""
    x = _sig(shape, comp, dt)
    m = model([h.make_node("DFT", ["x"], ["y"], axis=axis, inverse=1)],
              [("x", _TY[dt], list(x.shape))], opset=17)
    _close64(_run(tmp_path, m, [x]), _ifft64(x, axis), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("n_in,length", [(8, 5), (8, 12), (10, 16), (7, 3)])
def test_dft_inverse_length_vs_numpy(tmp_path, dt, n_in, length):
    """dft_length shorter (truncated signal) and longer (zero-padded)."""
    x = _sig((2, n_in), 2, dt)
    n = numpy_helper.from_array(np.array(length, np.int64), "n")
    m = model([h.make_node("DFT", ["x", "n"], ["y"], axis=1, inverse=1)],
              [("x", _TY[dt], list(x.shape))], opset=17, inits=[n])
    _close64(_run(tmp_path, m, [x]), _ifft64(x, 1, length), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("length", [9, 10])
def test_dft_irfft_length_vs_numpy(tmp_path, dt, length):
    """inverse + onesided (irfft), odd and even n, fewer bins than n//2+1 (9 -> 5 of 4)."""
    x = _sig((3, 4), 2, dt)
    n = numpy_helper.from_array(np.array(length, np.int64), "n")
    m = model([h.make_node("DFT", ["x", "n"], ["y"], axis=1, inverse=1, onesided=1)],
              [("x", _TY[dt], list(x.shape))], opset=17, inits=[n])
    _close64(_run(tmp_path, m, [x]), _ifft64(x, 1, length, onesided=True), dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_dft_inverse_dynamic_length_vs_numpy(tmp_path, dt):
    """Dynamic dims and dft_length given at run time, two sizes each
    (padding and truncating)."""
    from dynamic_util import session
    m = model([h.make_node("DFT", ["x", "n"], ["y"], axis=1, inverse=1)],
              [("x", _TY[dt], ["b", "t", 2]), ("n", T.INT64, [])], opset=17)
    sess = session(m, tmp_path)
    for shape, length in [((2, 6), 11), ((1, 9), 4)]:
        x = _sig(shape, 2, dt)
        _close64(sess.run([x, np.array(length, np.int64)])[0], _ifft64(x, 1, length), dt)


@pytest.mark.parametrize("opset", [17, 20])
def test_dft_inverse_node_test_ramp(tmp_path, opset):
    """The node tests' input (test_dft_inverse_opset19 / test_dft_inverse):
    the exact result is -5 + 0i at f = 5 in every column; onnx's expected data
    has 1.9e-7 for that 0 (numpy's complex64 FFT), beyond the test's atol 1e-7."""
    xc = np.arange(100, dtype=np.complex64).reshape(10, 10)
    x = np.stack((xc.real, xc.imag), axis=2).astype(np.float32).reshape(1, 10, 10, 2)
    if opset == 17:
        m = model([h.make_node("DFT", ["x"], ["y"], axis=1, inverse=1)],
                  [("x", T.FLOAT, [1, 10, 10, 2])], opset=17)
        feeds = [x]
    else:
        m = model([h.make_node("DFT", ["x", "", "axis"], ["y"], inverse=1)],
                  [("x", T.FLOAT, [1, 10, 10, 2]), ("axis", T.INT64, [])], opset=20)
        feeds = [x, np.array(1, np.int64)]
    y = _run(tmp_path, m, feeds)
    _close64(y, _ifft64(x, 1), np.float32)
    np.testing.assert_array_equal(y[0, 5, :, 0], np.full(10, -5.0, np.float32))
    assert np.abs(y[0, 5, :, 1]).max() < 1e-12
