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

from dynamic_util import check_shapes, model

FLOAT, UINT8, INT32 = 1, 2, 6


def _dyn_model(nodes, inputs, inits=(), opset=17, out_type=FLOAT):
    """inputs: (name, elem type, dims with str for dynamic); inits: (name, array)."""
    import onnx
    return model(nodes, inputs, outputs=[("y", out_type, None)], opset=opset,
                 inits=[onnx.numpy_helper.from_array(v, k) for k, v in inits])


def run_dynamic(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-4):
    """Compiled once; each feed dict compared with onnxruntime."""
    check_shapes(tmp_path, m, feeds, opt_level, rtol, atol, engine="onnxruntime")


def compile_once(tmp_path, m, opt_level=0):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    return ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))

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


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_same_dynamic(tmp_path, auto_pad, opt_level):
    """auto_pad SAME over dynamic odd/even sizes: the pads are computed at run time."""
    node = N("Conv", ["x", "w"], ["y"], auto_pad=auto_pad, strides=[2, 3])  # ORT: no dilation with SAME
    m = _dyn_model([node], [("x", FLOAT, ["N", 3, "H", "W"])], [("w", f32(4, 3, 4, 3))])
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in [(1, 3, 7, 9), (2, 3, 8, 5),
                                                       (1, 3, 1, 2)]], opt_level)


def test_conv3d_dynamic(tmp_path):
    node = N("Conv", ["x", "w", "b"], ["y"], group=2, strides=[1, 2, 1],
             auto_pad="SAME_UPPER")
    m = _dyn_model([node], [("x", FLOAT, ["N", 4, "D", "H", "W"])],
                   [("w", f32(6, 2, 2, 3, 2)), ("b", f32(6))])
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in [(1, 4, 3, 5, 4), (2, 4, 5, 4, 3)]], 0)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("rank,group", [(4, 1), (4, 2), (3, 1), (4, 4)])
def test_conv_dynamic_weights(tmp_path, rank, group, opt_level):
    """Weights (and bias) as graph inputs with unknown dims, as in the node
    tests' dynamic mode: kernel sizes and channels known only at run time."""
    sp = ["H", "W"][:rank - 2]
    node = N("Conv", ["x", "w", "b"], ["y"], group=group, pads=[1] * (2 * (rank - 2)))
    m = _dyn_model([node], [("x", FLOAT, ["N", "C"] + sp), ("w", FLOAT, ["M", "Cg", "KH", "KW"][:rank]),
                            ("b", FLOAT, ["M"])])
    feeds = []
    for n, c, m_, ks, size in [(1, 4, 4, (3, 3), (6, 7)), (2, 4, 8, (2, 1), (5, 4))]:
        feeds.append({"x": f32(n, c, *size[:rank - 2]), "w": f32(m_, c // group, *ks[:rank - 2]),
                      "b": f32(m_)})
    run_dynamic(tmp_path, m, feeds, opt_level)


def test_conv_dynamic_mismatch_is_an_error(tmp_path):
    """Channels / kernel-size consistency that only the run time knows is
    checked in the compiled code (an error naming the node, not a bad read)."""
    from onnx_mlir_py.runtime import RuntimeInputError
    node = N("Conv", ["x", "w"], ["y"], name="conv0", group=2)
    m = _dyn_model([node], [("x", FLOAT, ["N", "C", "H", "W"]),
                            ("w", FLOAT, ["M", "Cg", "KH", "KW"])])
    sess = compile_once(tmp_path, m, 0)
    assert sess.run([f32(1, 4, 5, 5), f32(2, 2, 3, 3)])[0].shape == (1, 2, 3, 3)
    with pytest.raises(RuntimeInputError, match=r"node 'conv0' \(Conv\).*C/group"):
        sess.run([f32(1, 4, 5, 5), f32(2, 3, 3, 3)])
    with pytest.raises(RuntimeInputError, match=r"node 'conv0' \(Conv\).*smaller than the "
                       r"effective kernel size 3"):
        sess.run([f32(1, 4, 2, 5), f32(2, 2, 3, 3)])
    with pytest.raises(RuntimeInputError, match=r"node 'conv0' \(Conv\).*divisible by group 2"):
        sess.run([f32(1, 4, 5, 5), f32(3, 2, 3, 3)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", ["static", "strided", "same_group_dynw", "1d_crop"])
def test_conv_transpose_dynamic(tmp_path, case, opt_level):
    if case == "static":  # -O3 takes its 2-D conv (once an internal error)
        node = N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 0, 0, 1])
        ins, inits = [("x", FLOAT, [1, 2, 4, 5])], [("w", f32(2, 3, 3, 2)), ("b", f32(3))]
        feeds = [{"x": f32(1, 2, 4, 5)}]
    elif case == "strided":
        node = N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 3], pads=[1, 0, 0, 2],
                 output_padding=[1, 0], dilations=[1, 2])
        ins, inits = [("x", FLOAT, ["N", 2, "H", "W"])], [("w", f32(2, 3, 3, 2)), ("b", f32(3))]
        feeds = [{"x": f32(*s)} for s in [(1, 2, 4, 5), (2, 2, 3, 2)]]
    elif case == "same_group_dynw":
        node = N("ConvTranspose", ["x", "w"], ["y"], group=2, strides=[2, 2],
                 auto_pad="SAME_UPPER")
        ins, inits = [("x", FLOAT, ["N", "C", "H", "W"]), ("w", FLOAT, ["C", "Mg", "KH", "KW"])], []
        feeds = [{"x": f32(1, 4, 3, 3), "w": f32(4, 1, 3, 3)},
                 {"x": f32(2, 2, 4, 5), "w": f32(2, 3, 2, 4)}]
    else:  # pads larger than the kernel reach: the stride-dilated input is cropped
        node = N("ConvTranspose", ["x", "w"], ["y"], strides=[2], pads=[3, 2])
        ins, inits = [("x", FLOAT, ["N", 2, "L"]), ("w", FLOAT, [2, 3, "K"])], []
        feeds = [{"x": f32(1, 2, 6), "w": f32(2, 3, 2)}, {"x": f32(2, 2, 9), "w": f32(2, 3, 4)}]
    run_dynamic(tmp_path, _dyn_model([node], ins, inits), feeds, opt_level)


def test_qlinear_conv_dynamic(tmp_path):
    u8 = lambda *s: R.integers(0, 255, s).astype(np.uint8)  # noqa: E731
    node = N("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
             auto_pad="SAME_LOWER", strides=[2, 2])
    m = _dyn_model([node], [("x", UINT8, ["N", 3, "H", "W"]), ("w", UINT8, ["M", 3, "K", "K"]),
                            ("b", INT32, ["M"])],
                   [("xs", np.array(0.02, np.float32)), ("xz", np.array(3, np.uint8)),
                    ("ws", np.array(0.01, np.float32)), ("wz", np.array(120, np.uint8)),
                    ("ys", np.array(0.5, np.float32)), ("yz", np.array(10, np.uint8))],
                   out_type=UINT8)
    feeds = [{"x": u8(1, 3, 5, 6), "w": u8(2, 3, 3, 3), "b": R.integers(-99, 99, 2).astype(np.int32)},
             {"x": u8(2, 3, 7, 4), "w": u8(4, 3, 2, 2), "b": R.integers(-99, 99, 4).astype(np.int32)}]
    run_dynamic(tmp_path, m, feeds, 0, rtol=0, atol=0)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_f16_conv_accumulates_in_f32(tmp_path, opt_level):
    """f16 Conv summed in f16 (test_causal_conv_with_state_silu_fp16: 9 of 64
    wrong); now read as f32, summed in f32, rounded once. 1-D and 2-D with a
    bias, C * k = 384, 2 run-time shapes, vs onnx.reference."""
    from dynamic_util import check_shapes, model
    m = model([N("Conv", ["x", "w", "bias"], ["y"], pads=[1, 1]),
               N("Conv", ["x2", "w2"], ["y2"], group=2)],
              [("x", 10, ["n", 128, "l"]), ("w", 10, [4, 128, 3]), ("bias", 10, [4]),
               ("x2", 10, ["n", 64, 5, 5]), ("w2", 10, [4, 32, 3, 3])],
              [("y", 10, None), ("y2", 10, None)])
    rng = np.random.default_rng(3)
    f = lambda *s: rng.uniform(0.0, 1.0, s).astype(np.float16)  # noqa: E731
    w, bias, w2 = f(4, 128, 3), f(4), f(4, 32, 3, 3)
    sets = [{"x": f(n, 128, ln), "w": w, "bias": bias, "x2": f(n, 64, 5, 5), "w2": w2}
            for n, ln in ((1, 6), (2, 9))]
    check_shapes(tmp_path, m, sets, opt_level, rtol=2e-3, atol=0)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_f16_conv_transpose_accumulates_in_f32(tmp_path, opt_level):
    """f16 ConvTranspose summed in f16: 16 channels of 2048 + 15 ones gave
    2048 (each + 1 rounded away), onnx.reference and onnxruntime 2064; now read
    as f32, summed (and the bias added) in f32, rounded once, as Conv. Integer
    values (exact in f32, so any order of the sum rounds alike). vs
    onnx.reference without a bias and with strides = kernel (it rounds each
    input position's contribution, then the sum of overlapping ones, and the
    sum before adding the bias: 2063 + 3 gives 2068 there, 2066 here and in
    onnxruntime); vs onnxruntime with a bias, overlaps and groups (which
    onnx.reference fails on). 1-D and 2-D, 2 run-time shapes."""
    from dynamic_util import check_shapes, model
    rng = np.random.default_rng(5)
    w = rng.integers(0, 3, (16, 2, 3)).astype(np.float16)
    w[0] = 2048
    w2 = rng.integers(-2, 3, (16, 3, 2, 2)).astype(np.float16)
    w2[0] = 1024
    bias = np.array([0.5, 3], np.float16)

    def x(*s):
        a = rng.integers(0, 3, s).astype(np.float16)
        a[:, 0] = 1
        return a
    plain = model([N("ConvTranspose", ["x", "w"], ["y"], strides=[3]),
                   N("ConvTranspose", ["x2", "w2"], ["y2"], strides=[2, 2])],
                  [("x", 10, ["n", 16, "l"]), ("w", 10, [16, 2, 3]),
                   ("x2", 10, ["n", 16, 3, "h"]), ("w2", 10, [16, 3, 2, 2])],
                  [("y", 10, None), ("y2", 10, None)])
    sets = [{"x": x(n, 16, ln), "w": w, "x2": x(n, 16, 3, ln), "w2": w2}
            for n, ln in ((1, 3), (2, 5))]
    check_shapes(tmp_path, plain, sets, opt_level, rtol=0, atol=0)
    biased = model([N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2]),
                    N("ConvTranspose", ["x2", "w2"], ["y2"], group=2, strides=[2, 1])],
                   [("x", 10, ["n", 16, "l"]), ("w", 10, [16, 2, 3]), ("b", 10, [2]),
                    ("x2", 10, ["n", 16, 3, "h"]), ("w2", 10, [16, 3, 2, 2])],
                   [("y", 10, None), ("y2", 10, None)])
    sets = [{"x": x(n, 16, ln), "w": w, "b": bias, "x2": x(n, 16, 3, ln), "w2": w2}
            for n, ln in ((1, 3), (2, 5))]
    (tmp_path / "b").mkdir()
    check_shapes(tmp_path / "b", biased, sets, opt_level, rtol=0, atol=0, engine="onnxruntime")
