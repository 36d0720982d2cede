"""Resize / Upsample lowering vs onnx.reference (onnxruntime for the
legacy v10 / Upsample semantics the reference does not implement)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check
from lowering_util import make_model
from onnx_mlir_py.testing.check import check_compiled

R = np.random.default_rng(7)
N = helper.make_node
E = np.array([], np.float32)
CTMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_crop_and_resize"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def x4(dt=np.float32, shape=(1, 2, 4, 5)):
    return (R.standard_normal(shape) * 5).astype(dt)


def resize(feeds, inits, out="y", opset=19, engine="reference", opt_level=None, tol=1e-5,
           **attrs):
    names = [n for n, _ in inits]
    if opset == 11 and "scales" not in names:  # v11: scales is required (empty)
        inits = inits + [("scales", E)]
        names.append("scales")
    ins = ["x", "roi", "scales" if "scales" in names else ""] + \
        (["sizes"] if "sizes" in names else [])
    nodes = [N("Resize", ins, [out], **attrs)]
    if engine == "reference" and opt_level is None:
        return check(nodes, feeds, [out], inits=inits, opset=opset, rtol=tol, atol=tol)
    m = make_model(nodes, feeds, [out], inits=inits, opset=opset)
    return check_compiled(m, feeds, engine=engine, rtol=tol, atol=tol, opt_level=opt_level or 0)


def _inits(scales=None, sizes=None, roi=E):
    out = [("roi", np.asarray(roi, np.float32))]
    if scales is not None:
        out.append(("scales", np.asarray(scales, np.float32)))
    if sizes is not None:
        out.append(("sizes", np.asarray(sizes, np.int64)))
    return out


@pytest.mark.parametrize("ctm", CTMS)
@pytest.mark.parametrize("scales", [[1, 1, 2.0, 1.5], [1, 1, 0.5, 0.6]])
def test_linear_ctm_scales(ctm, scales):
    roi = [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7] if ctm == "tf_crop_and_resize" else E
    resize({"x": x4()}, _inits(scales=scales, roi=roi), mode="linear",
           coordinate_transformation_mode=ctm, extrapolation_value=-3.0)


@pytest.mark.parametrize("nm", NEAREST)
@pytest.mark.parametrize("ctm", ["half_pixel", "asymmetric", "align_corners",
                                 "pytorch_half_pixel"])
def test_nearest_modes(nm, ctm):
    # (tf_half_pixel_for_nearest, v11 only, is implemented by neither
    # onnx.reference nor onnxruntime: not tested)
    resize({"x": x4()}, _inits(sizes=[1, 2, 7, 3]), mode="nearest", nearest_mode=nm,
           coordinate_transformation_mode=ctm)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("how", ["scales", "sizes"])
@pytest.mark.parametrize("nm", NEAREST)
@pytest.mark.parametrize("ctm", CTMS[:-1])
def test_nearest_integer_scales(ctm, nm, how, opt_level):
    """Nearest upsampling by integer scales (2 on H, 3 on W): the pairs whose
    source index is i // k are a copy generic (resize._REPEAT_MODES), the
    others keep the coordinate code; equal to onnx.reference either way."""
    inits = _inits(scales=[1, 1, 2, 3]) if how == "scales" else _inits(sizes=[1, 3, 10, 18])
    resize({"x": x4(shape=(1, 3, 5, 6))}, inits, opt_level=opt_level, tol=0, mode="nearest",
           nearest_mode=nm, coordinate_transformation_mode=ctm)


@pytest.mark.parametrize("dt", [np.float64, np.int32, np.int64])
def test_nearest_dtypes(dt):
    resize({"x": x4(dt)}, _inits(scales=[1, 1, 2, 3]), mode="nearest")


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_sizes_f64_and_opset11_13(mode):
    resize({"x": x4(np.float64)}, _inits(sizes=[1, 2, 9, 3]), mode=mode)
    resize({"x": x4()}, _inits(sizes=[1, 2, 3, 8]), mode=mode, opset=11)
    resize({"x": x4()}, _inits(scales=[1, 1, 1.5, 2.5]), mode=mode, opset=13)


@pytest.mark.parametrize("exclude", [0, 1])
@pytest.mark.parametrize("ctm", ["half_pixel", "align_corners", "asymmetric"])
def test_cubic(exclude, ctm):
    resize({"x": x4()}, _inits(scales=[1, 1, 1.75, 0.8]), mode="cubic", cubic_coeff_a=-0.5,
           exclude_outside=exclude, coordinate_transformation_mode=ctm)


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_axes_and_keep_aspect_ratio_opset18(policy):
    feeds = {"x": x4()}
    inits = [("roi", E), ("scales", E), ("sizes", np.array([6, 9], np.int64))]
    check([N("Resize", ["x", "roi", "scales", "sizes"], ["y"], mode="linear", axes=[2, 3],
             keep_aspect_ratio_policy=policy)], feeds, ["y"], inits=inits, opset=18,
          rtol=1e-5, atol=1e-5)


def test_dynamic_batch_resize():
    check([N("Resize", ["x", "roi", "scales"], ["y"], mode="linear")], {"x": x4(shape=(3, 2, 4, 4))},
          ["y"], inits=_inits(scales=[1, 1, 2, 2]), dyn_inputs=("x",), rtol=1e-5, atol=1e-5)


def test_upsample_nearest_opset9_and_7():
    x = x4()
    check([N("Upsample", ["x", "s"], ["y"], mode="nearest")], {"x": x}, ["y"], opset=9,
          inits=[("s", np.array([1, 1, 2, 3], np.float32))])
    m = make_model([N("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 3.0, 2.0])],
                   {"x": x}, ["y"], opset=7)
    check_compiled(m, {"x": x}, engine="onnxruntime")


@pytest.mark.parametrize("mode,scales", [("linear", [1, 1, 2, 2.5]), ("nearest", [1, 1, 1.5, 3])])
def test_resize_v10_and_upsample_linear_vs_onnxruntime(mode, scales):
    x = x4()
    s = np.array(scales, np.float32)
    for op in ("Resize", "Upsample"):
        m = make_model([N(op, ["x", "s"], ["y"], mode=mode)], {"x": x}, ["y"],
                       inits=[("s", s)], opset=10 if op == "Resize" else 9)
        check_compiled(m, {"x": x}, engine="onnxruntime", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("exclude", [0, 1])
@pytest.mark.parametrize("scales", [[1, 1, 0.5, 0.6], [1, 1, 0.3, 1.7], [1, 1, 2.0, 1.0]])
def test_antialias_constant_scales(mode, exclude, scales):
    """antialias=1: downsampled axes take 2 * ceil(h / scale) taps (a kernel
    widened by 1 / scale), upsampled ones the plain kernel."""
    resize({"x": x4(shape=(1, 2, 9, 11))}, _inits(scales=scales), mode=mode, antialias=1,
           exclude_outside=exclude, coordinate_transformation_mode="half_pixel")


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("ctm", ["align_corners", "asymmetric", "pytorch_half_pixel",
                                 "half_pixel_symmetric"])
def test_antialias_sizes_and_axes(mode, ctm):
    resize({"x": x4(shape=(2, 3, 10, 7))}, _inits(sizes=[3, 4]), mode=mode, antialias=1,
           axes=[2, 3], coordinate_transformation_mode=ctm)


def test_antialias_cubic_a_f64_opset18():
    resize({"x": x4(np.float64, shape=(1, 1, 8, 12))}, _inits(scales=[1, 1, 0.4, 0.25]),
           mode="cubic", antialias=1, cubic_coeff_a=-0.5, opset=18)
