"""A dilated Conv never reads the input under its kernel's holes: a NaN or
an infinity there leaves the output finite (fuzz s2670-80, s2643-15; those
were onnx.reference's error, the oracle's Conv is fixed in
testing/fuzz/reference_conv.py). Pins the compiler's answer, which does not
depend on the summation order here, at -O0 and -O3."""
import numpy as np
import pytest
from onnx import TensorProto as TP

from helpers_models import conv_model
from onnx_mlir_py.testing.check import reference, run_compiled

X1 = [[[1.0, np.nan, 2.0, np.inf, 4.0], [3.0, -np.inf, 5.0, np.nan, 1.0]]]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_grouped_dilated_conv_1d_f64(opt_level):
    """s2670-80's form: group 2, dilation 2, pads 1/1, f64 (onnxruntime has no
    f64 Conv). y[o] = w0 x[o - 1] + w1 x[o + 1]; x[o] sits under the hole."""
    x = np.array(X1)
    w = np.array([[[2.0, -1.0]], [[1.0, 1e300]]])
    want = np.array([[[np.nan, 0.0, np.nan, 0.0, np.inf],
                      [-np.inf, 3.0 + 5e300, np.nan, 5.0 + 1e300, np.nan]]])
    m = conv_model([1, 2, 5], [2, 1, 2], TP.DOUBLE, dilations=[2], group=2, pads=[1, 1])
    np.testing.assert_array_equal(run_compiled(m, {"x": x, "w": w}, opt_level)[0], want)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", ["grouped_1d", "depthwise_2d"])
def test_dilated_conv_f32_matches_onnxruntime(case, opt_level):
    rng = np.random.default_rng(3)
    if case == "grouped_1d":
        x = np.array(X1, np.float32)
        w = np.array([[[2.0, -1.0]], [[1.0, 3.0]]], np.float32)
        attrs = dict(dilations=[2], group=2, pads=[1, 1])
    else:
        x = rng.standard_normal([1, 3, 7, 7]).astype(np.float32)
        x[0, 0, 3, 3], x[0, 1, 2, 4], x[0, 2, 5, 1] = np.nan, np.inf, -np.inf
        w = rng.standard_normal([3, 1, 3, 3]).astype(np.float32)
        attrs = dict(dilations=[2, 2], group=3, pads=[2, 2, 2, 2])
    m = conv_model(list(x.shape), list(w.shape), TP.FLOAT, **attrs)
    want = reference(m, {"x": x, "w": w}, "onnxruntime")[0]
    assert np.isfinite(want).any() and not np.isfinite(want).all()
    np.testing.assert_allclose(run_compiled(m, {"x": x, "w": w}, opt_level)[0], want,
                               rtol=1e-5, atol=1e-5)
