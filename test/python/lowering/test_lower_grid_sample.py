"""GridSample and AffineGrid against onnx.reference: every mode x
padding_mode x align_corners in 2-D (grid values past [-1, 1] so padding
matters), linear/nearest in 3-D, f64, opset 16 spellings (vs onnxruntime); compiled once
with dynamic dims and run at two run-time shapes; the run-time checks of
a batch mismatch and of a wrong size."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(0)


def _feeds(xs, gs, dtype=np.float32):
    return [{"x": R.standard_normal(x).astype(dtype),
             "g": R.uniform(-1.4, 1.4, g).astype(dtype)} for x, g in zip(xs, gs)]


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(tmp_path, mode, pad, align):
    m = model([h.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad,
                           align_corners=align)],
              [("x", T.FLOAT, ["n", "c", "h", "w"]), ("g", T.FLOAT, ["n", "p", "q", 2])],
              opset=20)
    feeds = _feeds([(2, 2, 3, 4), (1, 1, 5, 2)], [(2, 3, 2, 2), (1, 2, 4, 2)])
    check_shapes(tmp_path, m, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
def test_grid_sample_3d(tmp_path, mode, pad):
    m = model([h.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad)],
              [("x", T.FLOAT, ["n", "c", "d", "h", "w"]),
               ("g", T.FLOAT, ["n", "p", "q", "s", 3])], opset=20)
    feeds = _feeds([(1, 2, 3, 2, 4), (2, 1, 2, 3, 2)], [(1, 2, 2, 3, 3), (2, 1, 3, 2, 3)])
    check_shapes(tmp_path, m, feeds, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
def test_grid_sample_opset16_vs_onnxruntime(tmp_path, mode):
    """opset 16 spellings (onnx.reference knows only the opset 20 ones)."""
    m = model([h.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                           padding_mode="reflection")],
              [("x", T.FLOAT, [1, 2, "h", "w"]), ("g", T.FLOAT, [1, 3, 3, 2])], opset=16,
              outputs=[("y", T.FLOAT, None)])
    feeds = _feeds([(1, 2, 4, 4), (1, 2, 2, 6)], [(1, 3, 3, 2)] * 2)
    check_shapes(tmp_path, m, feeds, rtol=1e-4, atol=1e-5, engine="onnxruntime")


def test_grid_sample_f64(tmp_path):
    m = model([h.make_node("GridSample", ["x", "g"], ["y"], mode="cubic",
                           padding_mode="border", align_corners=1)],
              [("x", T.DOUBLE, [1, 2, "h", "w"]), ("g", T.DOUBLE, [1, 3, 3, 2])], opset=20)
    feeds = _feeds([(1, 2, 4, 4), (1, 2, 2, 6)], [(1, 3, 3, 2)] * 2, np.float64)
    # onnx.reference denormalizes the coordinates in f32 (we use f64 here)
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-6)


def test_grid_sample_batch_mismatch_is_an_error(tmp_path):
    m = model([h.make_node("GridSample", ["x", "g"], ["y"], name="gs")],
              [("x", T.FLOAT, ["n", 1, 3, 3]), ("g", T.FLOAT, ["m", 2, 2, 2])], opset=20)
    check_rejects(tmp_path, m, _feeds([(2, 1, 3, 3)], [(3, 2, 2, 2)]),
                  match=r"gs.*X has batch size 2 but grid has 3")


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [[2, 3, 4, 5], [1, 1, 3, 2, 4]])
def test_affine_grid_runtime_size(tmp_path, align, size):
    r = len(size) - 2
    m = model([h.make_node("AffineGrid", ["t", "s"], ["y"], align_corners=align)],
              [("t", T.FLOAT, ["n", r, r + 1]), ("s", T.INT64, [r + 2])], opset=20)
    other = [size[0] + 1, 2] + [d + 1 for d in size[2:]]
    feeds = [{"t": R.standard_normal((s[0], r, r + 1)).astype(np.float32),
              "s": np.array(s, np.int64)} for s in (size, other)]
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-6)


def test_affine_grid_size_mismatch_is_an_error(tmp_path):
    m = model([h.make_node("AffineGrid", ["t", "s"], ["y"], name="ag")],
              [("t", T.FLOAT, ["n", 2, 3]), ("s", T.INT64, [4])], opset=20)
    check_rejects(tmp_path, m, [{"t": np.zeros((2, 2, 3), np.float32),
                                 "s": np.array([3, 1, 2, 2], np.int64)}],
                  match=r"ag.*size\[0\] is 3 but theta has 2 grids")
