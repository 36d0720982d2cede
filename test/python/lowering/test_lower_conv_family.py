"""Conv 1-D/3-D (groups, auto_pad), ConvTranspose, N-D pools, LpPool,
GlobalLpPool: node tests and onnx.reference checks."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from lowering_util import check
from node_suite import run_case

N = helper.make_node
R = np.random.default_rng(5)

NODE_TESTS = ["test_convtranspose", "test_convtranspose_1d", "test_convtranspose_3d",
              "test_convtranspose_autopad_same", "test_convtranspose_dilations",
              "test_convtranspose_group_2_image_3", "test_convtranspose_output_shape",
              "test_convtranspose_pads", "test_lppool_1d_default", "test_lppool_2d_same_lower",
              "test_lppool_3d_default", "test_maxpool_1d_default", "test_maxpool_3d_dilations",
              "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True",
              "test_averagepool_1d_default", "test_maxpool_2d_uint8"]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


def f32(*s):
    return R.standard_normal(s).astype(np.float32)


@pytest.mark.parametrize("shape,kernel,kw", [
    ((2, 4, 11), (3,), {"group": 2, "strides": [2], "pads": [1, 2]}),
    ((1, 3, 9), (3,), {"group": 3, "auto_pad": "SAME_LOWER", "dilations": [2]}),
    ((1, 2, 5, 6, 4), (3, 2, 2), {"auto_pad": "SAME_UPPER", "strides": [2, 1, 2]}),
    ((1, 4, 5, 4, 4), (2, 2, 2), {"group": 4, "auto_pad": "VALID"}),
])
def test_conv_nd(shape, kernel, kw):
    g = kw.get("group", 1)
    cin, cout = shape[1], shape[1] * (2 if g > 1 else 1) if g != shape[1] else shape[1]
    w = f32(cout, cin // g, *kernel)
    check([N("Conv", ["x", "w", "b"], ["y"], **kw)], {"x": f32(*shape)}, ["y"],
          inits=[("w", w), ("b", f32(cout))], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,kernel,kw", [
    ((1, 2, 5), (3,), {"strides": [3], "output_padding": [2], "pads": [1, 0]}),
    ((2, 4, 3, 3), (3, 2), {"strides": [2, 1], "dilations": [1, 2], "pads": [2, 0, 1, 1]}),
])
def test_conv_transpose(shape, kernel, kw):
    g = kw.get("group", 1)
    w = f32(shape[1], 3, *kernel)
    check([N("ConvTranspose", ["x", "w", "b"], ["y"], **kw)], {"x": f32(*shape)}, ["y"],
          inits=[("w", w), ("b", f32(3 * g))], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op,kw", [
    ("MaxPool", {"kernel_shape": [3], "strides": [2], "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [2, 3, 2], "pads": [0, 1, 0, 0, 1, 0],
                     "count_include_pad": 0, "ceil_mode": 1, "strides": [2, 2, 2]}),
    ("LpPool", {"kernel_shape": [2, 2], "p": 3, "strides": [1, 2], "pads": [1, 0, 0, 1]}),
])
def test_pool_nd(op, kw):
    ns = len(kw["kernel_shape"])
    x = f32(1, 2, *([7, 5, 6][:ns] if ns > 1 else [9]))
    check([N(op, ["x"], ["y"], **kw)], {"x": x}, ["y"], opset=19, rtol=1e-4, atol=1e-5)


def test_global_lp_pool():
    # onnx.reference has no GlobalLpPool: the definition directly
    from engine import run_model
    from lowering_util import make_model
    x = f32(2, 3, 4, 5)
    m = make_model([N("GlobalLpPool", ["x"], ["y"], p=3), N("GlobalLpPool", ["x"], ["z"])],
                   {"x": x}, ["y", "z"])
    ey = (np.abs(x) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)
    ez = np.sqrt((x * x).sum(axis=(2, 3), keepdims=True))
    got = run_model(m, {"x": x}, [ey, ez])
    np.testing.assert_allclose(got[0], ey, rtol=1e-5)
    np.testing.assert_allclose(got[1], ez, rtol=1e-5)


# -- dynamic dims: each model compiled once, run at several shapes vs onnxruntime --

FLOAT = 1


def _dyn_model(nodes, inputs, inits=(), opset=17, out_type=1):
    """inputs: (name, onnx elem type, dims with str for dynamic)."""
    import onnx
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s)
                                       for n, t, s in inputs],
                          [helper.make_tensor_value_info("y", out_type, None)],
                          initializer=[onnx.numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def run_dynamic(tmp_path, m, feeds_list, opt_level, rtol=1e-4, atol=1e-4):
    """Compile ``m`` once; each feeds dict must match onnxruntime (shape and values)."""
    import onnxruntime as ort
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in m.graph.input]
    for feeds in feeds_list:
        want = ref.run(None, feeds)
        got = sess.run([feeds[n] for n in names])
        shapes = {k: v.shape for k, v in feeds.items()}
        for g_, w_ in zip(got, want):
            assert g_.shape == w_.shape, (shapes, g_.shape, w_.shape)
            np.testing.assert_allclose(g_, w_, rtol=rtol, atol=atol, err_msg=str(shapes))


FLOAT = 1
@pytest.mark.parametrize("opt_level", [0, 3])
def test_conv1d_kernel1_dynamic_length(tmp_path, opt_level):
    """The issue's voice-activity reproducer: Conv k=1 over [1, 128, n] returned
    [1, 1, 1] (the batch dim was used for the length)."""
    m = _dyn_model([N("Conv", ["x", "w"], ["y"])], [("x", FLOAT, [1, 128, "n"])],
                   [("w", f32(1, 128, 1))])
    run_dynamic(tmp_path, m, [{"x": f32(1, 128, n)} for n in (4, 7, 1)], opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", ["1d", "2d", "2d_group", "2d_depthwise"])
def test_conv_dynamic_spatial(tmp_path, case, opt_level):
    if case == "1d":
        node = N("Conv", ["x", "w", "b"], ["y"], strides=[2], pads=[1, 2], dilations=[2])
        x, w, shapes = ["N", 4, "L"], f32(6, 4, 3), [(1, 4, 9), (2, 4, 16), (3, 4, 5)]
    elif case == "2d":
        node = N("Conv", ["x", "w", "b"], ["y"], strides=[2, 1], pads=[1, 0, 1, 2])
        x, w, shapes = ["N", 3, "H", "W"], f32(6, 3, 3, 2), [(1, 3, 7, 6), (2, 3, 10, 5)]
    elif case == "2d_group":
        node = N("Conv", ["x", "w", "b"], ["y"], group=2, pads=[1, 1, 1, 1])
        x, w, shapes = ["N", 4, "H", "W"], f32(6, 2, 3, 3), [(1, 4, 5, 8), (3, 4, 6, 3)]
    else:
        node = N("Conv", ["x", "w", "b"], ["y"], group=4, strides=[2, 2])
        x, w, shapes = [1, 4, "H", "W"], f32(4, 1, 3, 3), [(1, 4, 7, 9), (1, 4, 12, 5)]
    m = _dyn_model([node], [("x", FLOAT, x)], [("w", w), ("b", f32(w.shape[0]))])
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in shapes], opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_conv_integer_dynamic_spatial(tmp_path, opt_level):
    """ConvInteger had the same bug (every dynamic result dim was the batch)."""
    u8 = lambda *s: R.integers(0, 255, s).astype(np.uint8)  # noqa: E731
    node = N("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 0, 1, 1])
    m = _dyn_model([node], [("x", 2, ["N", 3, "H", "W"])],
                   [("w", u8(4, 3, 3, 2)), ("xz", np.array(7, np.uint8))], out_type=6)
    run_dynamic(tmp_path, m, [{"x": u8(*s)} for s in [(1, 3, 5, 4), (2, 3, 8, 9)]], opt_level)
