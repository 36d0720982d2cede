"""Resize with dynamic input dims and scales/sizes known only at run time:
each model compiled once, compared with onnxruntime at 3 run-time shapes
(and scales/sizes values), -O0 and -O3."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import dynamic_util as dyn

R = np.random.default_rng(11)
N = h.make_node
Y = [("y", T.FLOAT, None)]
ORT = "onnxruntime"
SHAPES = [(1, 3, 4, 5), (2, 3, 7, 3), (1, 3, 1, 6)]
CFGS = [("nearest", "asymmetric", "floor"), ("nearest", "half_pixel", "round_prefer_floor"),
        ("nearest", "align_corners", "round_prefer_ceil"), ("linear", "asymmetric", "floor"),
        ("linear", "half_pixel", "floor"), ("linear", "align_corners", "floor"),
        ("linear", "pytorch_half_pixel", "floor")]


def engine(cfg, integral=False):
    """onnxruntime, except align_corners / pytorch_half_pixel at non-integral
    scales: onnxruntime uses the output dim, the ONNX reference (which the
    static lowering and the node tests follow) scale * input dim."""
    return "reference" if cfg[1] in ("align_corners", "pytorch_half_pixel") and \
        not integral else ORT


def x_of(s):
    return R.standard_normal(s).astype(np.float32)


def resize(ins, mode, ctm, nearest, **kw):
    return N("Resize", ins, ["y"], mode=mode, coordinate_transformation_mode=ctm,
             nearest_mode=nearest, name="rs", **kw)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_yolo_upsample_2x_dynamic_hw(tmp_path, opt_level):
    """Resize(x, roi="", scales=Constant[1,1,2,2]) on [?,C,?,?] (YOLO exports)."""
    m = dyn.model([N("Constant", [], ["s"], value=h.make_tensor("v", T.FLOAT, [4], [1, 1, 2, 2])),
                   N("Resize", ["x", "", "s"], ["y"], mode="nearest", name="rs",
                     coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
                  [("x", T.FLOAT, ["n", 3, "h", "w"])], Y, opset=13)
    dyn.check_shapes(tmp_path, m, [{"x": x_of(s)} for s in SHAPES], opt_level, engine=ORT)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 1.5, 0.6]])
@pytest.mark.parametrize("cfg", CFGS)
def test_constant_scales_dynamic_dims(tmp_path, cfg, scales, opt_level):
    m = dyn.model([resize(["x", "", "s"], *cfg)], [("x", T.FLOAT, ["n", 3, "h", "w"])], Y,
                  opset=19, inits=[h.make_tensor("s", T.FLOAT, [4], scales)])
    dyn.check_shapes(tmp_path, m, [{"x": x_of(s)} for s in SHAPES], opt_level,
                     rtol=1e-4, atol=1e-5, engine=engine(cfg, scales[2] == 2))


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("cfg", CFGS)
def test_run_time_scales(tmp_path, cfg, opt_level):
    m = dyn.model([resize(["x", "", "s"], *cfg)],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("s", T.FLOAT, [4])], Y, opset=19)
    feeds = [{"x": x_of(s), "s": np.array(sc, np.float32)}
             for s, sc in zip(SHAPES, [[1, 1, 2, 2], [1, 1, 1.5, 0.6], [1, 1, 3, 0.5]])]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5, engine=engine(cfg))


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
@pytest.mark.parametrize("cfg", CFGS[:2] + CFGS[4:6])
def test_run_time_sizes(tmp_path, cfg, policy, opt_level):
    m = dyn.model([resize(["x", "", "", "z"], *cfg, axes=[2, 3],
                          keep_aspect_ratio_policy=policy)],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("z", T.INT64, [2])], Y, opset=19)
    feeds = [{"x": x_of(s), "z": np.array(z, np.int64)}
             for s, z in zip(SHAPES, [[8, 10], [5, 4], [3, 2]])]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5, engine=engine(cfg))


def test_run_time_scales_checked(tmp_path):
    m = dyn.model([resize(["x", "", "s"], "nearest", "asymmetric", "floor")],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("s", T.FLOAT, ["k"])], Y, opset=19)
    x = x_of(SHAPES[0])
    dyn.check_shapes(tmp_path, m, [{"x": x, "s": np.array([1, 1, 2, 2], np.float32)}],
                     engine=ORT)
    dyn.check_rejects(tmp_path, m, [{"x": x, "s": np.array([1, 1, -2, 2], np.float32)}],
                      r"node 'rs' \(Resize\).*scales must be positive")
    dyn.check_rejects(tmp_path, m, [{"x": x, "s": np.array([1, 2, 2], np.float32)}],
                      r"node 'rs' \(Resize\).*'scales' has 3 elements, expected 4")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_run_time_roi_tf_crop_and_resize(tmp_path, opt_level):
    m = dyn.model([resize(["x", "roi", "", "z"], "linear", "tf_crop_and_resize", "floor",
                          axes=[3, 2], extrapolation_value=-3.0)],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("roi", T.FLOAT, [4]),
                   ("z", T.INT64, [2])], Y, opset=19)
    feeds = [{"x": x_of(s), "roi": np.array(r, np.float32), "z": np.array(z, np.int64)}
             for s, r, z in zip(SHAPES, [[0.2, 0.1, 0.9, 1.2], [0, 0, 1, 1], [0.5, -0.2, 0.6, 0.7]],
                                [[6, 3], [2, 5], [1, 4]])]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5, engine=ORT)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_run_time_scales(tmp_path, mode, opt_level):
    """antialias=1 with scales known only at run time: the tap count
    (2 * ceil(h / scale) when downsampling) is computed at run time."""
    m = dyn.model([N("Resize", ["x", "", "s"], ["y"], mode=mode, antialias=1, name="rs")],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("s", T.FLOAT, [4])], Y, opset=19)
    feeds = [{"x": x_of(s), "s": np.array(sc, np.float32)}
             for s, sc in zip([(1, 3, 9, 8), (2, 3, 7, 11), (1, 3, 5, 6)],
                              [[1, 1, 0.6, 0.6], [1, 1, 1.5, 0.3], [1, 1, 0.5, 2]])]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5, engine="reference")


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_run_time_sizes(tmp_path, mode, opt_level):
    m = dyn.model([N("Resize", ["x", "", "", "z"], ["y"], mode=mode, antialias=1, axes=[2, 3],
                     exclude_outside=1, name="rs")],
                  [("x", T.FLOAT, ["n", 3, "h", "w"]), ("z", T.INT64, [2])], Y, opset=19)
    feeds = [{"x": x_of(s), "z": np.array(z, np.int64)}
             for s, z in zip([(1, 3, 9, 8), (2, 3, 7, 11), (1, 3, 5, 6)],
                             [[3, 3], [4, 2], [7, 3]])]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5, engine="reference")
