"""DFT (a direct O(n^2) DFT) against onnx.reference in f64 (numpy.fft):
forward real/complex input, one-sided, inverse, irfft with even and odd
lengths, dft_length padding and truncating, the axis as an attribute (v17)
and as a run-time input (v20, also out of range); dynamic dims, two
run-time shapes each. The inverse also against numpy.fft in f64 at f32 and
f64 (one f32 rounding of the result), with the node tests' ramp input.
STFT against an f64 numpy STFT (one rounding) and onnx.reference: real and
complex signals, onesided 0/1, with and without window / frame_length,
frame_step below and equal to frame_length, batch 1 and 2, f32 and f64, a
dynamic signal length, run-time frame_step / frame_length, rejections.
MelWeightMatrix exactly equal to onnx.reference: constant and run-time
inputs, several bin counts, rates and ranges, output types."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h, numpy_helper
from onnx.reference import ReferenceEvaluator

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


# -- STFT against onnx.reference and an f64 numpy STFT --------------------------------
def _stft64(x, step, n, window, onesided):
    """numpy f64 STFT of x [batch, L, 1|2]: [batch, frames, bins, 2]."""
    x = x.astype(np.float64)
    xc = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    w = np.ones(n) if window is None else window.astype(np.float64)
    frames = (x.shape[1] - n) // step + 1
    fr = np.stack([xc[:, f * step:f * step + n] * w for f in range(frames)], axis=1)
    y = np.fft.fft(fr, axis=-1)
    if onesided:
        y = y[..., :n // 2 + 1]
    return np.stack((y.real, y.imag), axis=-1)


def _stft_model(dt, sig_dims, comp, step, n, window, length_input, onesided, runtime=False):
    inputs = [("x", _TY[dt], sig_dims + [comp])]
    inits, names = [], ["x", "step", "", ""]
    if runtime:
        inputs.append(("step", T.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(step, np.int64), "step"))
    if window is not None:
        inits.append(numpy_helper.from_array(window, "w"))
        names[2] = "w"
    if length_input:
        if runtime:
            inputs.append(("n", T.INT64, []))
        else:
            inits.append(numpy_helper.from_array(np.array(n, np.int64), "n"))
        names[3] = "n"
    while names[-1] == "":
        names.pop()
    return model([h.make_node("STFT", names, ["y"], onesided=onesided, name="stft")],
                 inputs, opset=17, inits=inits)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("comp,onesided", [(1, 0), (1, 1), (2, 0)])
@pytest.mark.parametrize("step,n,win,length_input", [
    (4, 8, True, True),     # window and frame_length, step < n
    (8, 8, True, False),    # window only, step = n
    (3, 8, False, True),    # frame_length only
    (5, None, False, False),  # neither: one frame of the whole signal
])
@pytest.mark.parametrize("batch", [1, 2])
def test_stft(tmp_path, dt, comp, onesided, step, n, win, length_input, batch):
    sig_len = 24
    n_eff = sig_len if n is None else n
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_eff) / n_eff)).astype(dt) if win \
        else None
    m = _stft_model(dt, [batch, sig_len], comp, step, n_eff, window, length_input, onesided)
    x = _sig((batch, sig_len), comp, dt)
    y = _run(tmp_path, m, [x])
    want = _stft64(x, step, n_eff, window, onesided)
    _close64(y, want, dt)
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0]
    tol = 1e-4 if dt == np.float32 else 1e-10
    np.testing.assert_allclose(y, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_stft_dynamic_signal_length(tmp_path, dt):
    """A dynamic batch and signal length: two run-time sizes, frames follow."""
    window = np.hanning(6).astype(dt)
    m = _stft_model(dt, ["b", "t"], 1, 2, 6, window, True, 1)
    check_shapes(tmp_path, m, [{"x": _sig((2, 17), 1, dt)}, {"x": _sig((1, 9), 1, dt)}],
                 rtol=1e-4 if dt == np.float32 else 1e-10, atol=1e-4 if dt == np.float32 else 1e-10)


def test_stft_runtime_step_and_length(tmp_path):
    """frame_step and frame_length given at run time (complex signal, no window)."""
    from dynamic_util import session
    m = _stft_model(np.float64, ["b", "t"], 2, None, None, None, True, 0, runtime=True)
    sess = session(m, tmp_path)
    for shape, step, n in [((2, 20), 3, 7), ((1, 12), 4, 4)]:
        x = _sig(shape, 2, np.float64)
        y = sess.run([x, np.array(step, np.int64), np.array(n, np.int64)])[0]
        _close64(y, _stft64(x, step, n, None, False), np.float64)


def test_stft_signal_too_short(tmp_path):
    m = _stft_model(np.float32, ["b", "t"], 1, 2, 8, None, True, 1)
    check_rejects(tmp_path, m, [{"x": _sig((1, 5), 1, np.float32)}],
                  match=r"stft.*frame_length 8 is longer than the signal \(5 samples\)")


@pytest.mark.parametrize("case,match", [
    (dict(comp=2, onesided=1), "onesided = 1 needs a real signal"),
    (dict(step=0), "frame_step is 0: expected >= 1"),
    (dict(n=6, win=8), "window has length 8: expected frame_length = 6"),
    (dict(n=40), "frame_length 40 is longer than the signal"),
])
def test_stft_rejected(tmp_path, case, match):
    import onnx_mlir_py
    c = dict(comp=1, onesided=0, step=2, n=8, win=None) | case
    window = None if c["win"] is None else np.ones(c["win"], np.float32)
    m = _stft_model(np.float32, [1, 24], c["comp"], c["step"], c["n"], window, True, c["onesided"])
    with pytest.raises(Exception, match=match):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


# -- MelWeightMatrix ----------------------------------------------------------------
_MEL_CASES = [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 8000.0),
              (40, 1024, 22050, 125.0, 7600.0), (3, 10, 100, 10.0, 45.0),
              (64, 400, 16000, 0.0, 8000.0), (13, 255, 44100, 300.0, 11025.5)]


def _mel_inputs(bins, n, rate, lo, hi, edge_dt):
    return [np.array(bins, np.int64), np.array(n, np.int64), np.array(rate, np.int64),
            np.array(lo, edge_dt), np.array(hi, edge_dt)]


def _mel_ref(feeds, out_dt):
    from onnx.reference.ops.op_mel_weight_matrix import MelWeightMatrix as M
    return M._run(None, *feeds, output_datatype=out_dt)[0]


@pytest.mark.parametrize("case", _MEL_CASES)
@pytest.mark.parametrize("edge_dt,out_dt", [(np.float32, T.FLOAT), (np.float64, T.DOUBLE),
                                            (np.float32, T.DOUBLE), (np.float64, T.FLOAT16),
                                            (np.float32, T.INT32)])
def test_mel_weight_matrix_constant(tmp_path, case, edge_dt, out_dt):
    """Constant inputs: a static result type, exact against onnx.reference."""
    feeds = _mel_inputs(*case, edge_dt)
    names = ["bins", "n", "rate", "lo", "hi"]
    inits = [numpy_helper.from_array(v, k) for k, v in zip(names, feeds)]
    m = model([h.make_node("MelWeightMatrix", names, ["y"], output_datatype=out_dt)], [],
              opset=17, inits=inits)
    y = _run(tmp_path, m, [])
    want = _mel_ref(feeds, out_dt)
    assert y.dtype == want.dtype and y.shape == (case[1] // 2 + 1, case[0])
    np.testing.assert_array_equal(y, want)
    assert y.max() == 1   # not vacuous: a peak, and ramps between 0 and 1
    if out_dt != T.INT32 and case[1] >= 256:
        assert ((y > 0) & (y < 1)).any()


@pytest.mark.parametrize("edge_dt,out_dt", [(np.float32, T.FLOAT), (np.float64, T.DOUBLE)])
def test_mel_weight_matrix_runtime(tmp_path, edge_dt, out_dt):
    """Inputs at run time: the result's shape is computed at run time, every case
    through one compiled model."""
    from dynamic_util import session
    ty = T.FLOAT if edge_dt == np.float32 else T.DOUBLE
    m = model([h.make_node("MelWeightMatrix", ["bins", "n", "rate", "lo", "hi"], ["y"],
                           output_datatype=out_dt)],
              [("bins", T.INT64, []), ("n", T.INT64, []), ("rate", T.INT64, []),
               ("lo", ty, []), ("hi", ty, [])], opset=17)
    sess = session(m, tmp_path)
    for case in _MEL_CASES:
        feeds = _mel_inputs(*case, edge_dt)
        y = sess.run(feeds)[0]
        want = _mel_ref(feeds, out_dt)
        assert y.shape == want.shape == (case[1] // 2 + 1, case[0])
        np.testing.assert_array_equal(y, want)


def test_mel_weight_matrix_int32_inputs(tmp_path):
    feeds = [np.array(10, np.int32), np.array(64, np.int32), np.array(8000, np.int32),
             np.array(0.0, np.float32), np.array(4000.0, np.float32)]
    names = ["bins", "n", "rate", "lo", "hi"]
    m = model([h.make_node("MelWeightMatrix", names, ["y"])], [], opset=17,
              inits=[numpy_helper.from_array(v, k) for k, v in zip(names, feeds)])
    np.testing.assert_array_equal(_run(tmp_path, m, []), _mel_ref(feeds, T.FLOAT))


def test_mel_weight_matrix_rejects_zero_bins(tmp_path):
    import onnx_mlir_py
    names = ["bins", "n", "rate", "lo", "hi"]
    feeds = _mel_inputs(0, 16, 8000, 0.0, 4000.0, np.float32)
    m = model([h.make_node("MelWeightMatrix", names, ["y"], name="mel")], [], opset=17,
              inits=[numpy_helper.from_array(v, k) for k, v in zip(names, feeds)])
    with pytest.raises(Exception, match=r"mel.*num_mel_bins' is 0: expected >= 1"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_stft_with_onnx_shape_inference(tmp_path, opt_level):
    """The importer's types come from onnx.shape_inference, which gives an
    STFT 16 bins for frame_length 16 whatever ``onesided`` says; the rule's 9
    (frame_length // 2 + 1, as onnx.reference) is taken instead of refusing
    the model (the node tests test_stft / test_stft_with_window in constant
    mode)."""
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as hp
    from onnx import numpy_helper as nhp
    from onnx.reference import ReferenceEvaluator

    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    g = hp.make_graph([hp.make_node("STFT", ["sig", "step", "", "len"], ["y"], name="stft")],
                      "stft", [hp.make_tensor_value_info("sig", TP.FLOAT, [1, 128, 1])],
                      [hp.make_tensor_value_info("y", TP.FLOAT, None)],
                      [nhp.from_array(np.array(8, np.int64), "step"),
                       nhp.from_array(np.array(16, np.int64), "len")])
    m = hp.make_model(g, opset_imports=[hp.make_opsetid("", 17)])
    m.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(m).graph.output[0].type.tensor_type.shape
    assert [d.dim_value for d in inferred.dim] == [1, 15, 16, 2]      # onnx's (wrong) bins
    x = np.random.default_rng(5).standard_normal((1, 128, 1)).astype(np.float32)
    got = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "s.so",
                                                opt_level=opt_level)).run([x])[0]
    want = ReferenceEvaluator(m).run(None, {"sig": x})[0]
    assert got.shape == want.shape == (1, 15, 9, 2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
