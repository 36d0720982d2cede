"""DFT (a direct O(n^2) DFT) against onnx.reference in f64 (numpy.fft):
forward real/complex input, one-sided, inverse, irfft with even and odd
lengths, dft_length padding and truncating, the axis as an attribute (v17)
and as a run-time input (v20, also out of range); dynamic dims, two
run-time shapes each."""
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
