"""MatMulInteger / ConvInteger / QLinearMatMul / QLinearConv /
DynamicQuantizeLinear lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import lowering_util
from engine import run_model
from lowering_util import check, make_model
from onnx.reference import ReferenceEvaluator

lowering_util.NP2ONNX.setdefault(np.dtype(np.int8), TensorProto.INT8)
lowering_util.NP2ONNX.setdefault(np.dtype(np.float16), TensorProto.FLOAT16)

R = np.random.default_rng(11)
N = helper.make_node


def q(shape, dt):
    info = np.iinfo(dt)
    return R.integers(info.min, info.max + 1, shape).astype(dt)


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("zp", ["none", "scalar", "column"])
def test_matmul_integer_2d(dt, zp):
    a, w = q((4, 5), dt), q((5, 3), dt)
    feeds, ins = {"a": a, "w": w}, ["a", "w"]
    if zp == "scalar":
        feeds.update(az=q((), dt), wz=q((), dt))
    elif zp == "column":  # per column of B
        feeds.update(az=q((1,), dt), wz=q((3,), dt))
    ins += [k for k in ("az", "wz") if k in feeds]
    check([N("MatMulInteger", ins, ["y"])], feeds, ["y"], opset=10)


def test_matmul_integer_per_row_vector():
    # 2-D A with an M-vector zero point (spec); the reference only broadcasts
    # numpy-style, so it gets the same zero points as (M, 1)
    a, w = q((4, 5), np.uint8), q((5, 3), np.uint8)
    az, wz = q((4,), np.uint8), q((3,), np.uint8)
    feeds = {"a": a, "w": w, "az": az, "wz": wz}
    m = make_model([N("MatMulInteger", ["a", "w", "az", "wz"], ["y"])], feeds, ["y"], opset=10)
    ref_feeds = dict(feeds, az=az.reshape(4, 1))
    ref = make_model([N("MatMulInteger", ["a", "w", "az", "wz"], ["y"])], ref_feeds, ["y"],
                     opset=10)
    (expected,) = ReferenceEvaluator(ref).run(None, ref_feeds)
    (got,) = run_model(m, feeds, [expected])
    np.testing.assert_array_equal(got, expected)


def test_matmul_integer_batched_mixed_signs():
    a, w = q((2, 3, 4), np.uint8), q((4, 6), np.int8)
    check([N("MatMulInteger", ["a", "w", "az"], ["y"])],
          {"a": a, "w": w, "az": np.array(7, np.uint8)}, ["y"], opset=10)


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 0, 1, 2]}, {"strides": [2, 2]},
                                   {"group": 2, "pads": [1, 1, 1, 1]}])
def test_conv_integer(dt, attrs):
    x = q((1, 4, 5, 6), dt)
    w = q((6, 4 // attrs.get("group", 1), 3, 3), dt)
    feeds = {"x": x, "w": w, "xz": q((), dt)}
    check([N("ConvInteger", ["x", "w", "xz"], ["y"], **attrs)], feeds, ["y"], opset=10)


def test_conv_integer_per_channel_weight_zp():
    x, w = q((2, 3, 4, 4), np.uint8), q((5, 3, 2, 2), np.uint8)
    check([N("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 0, 0])],
          {"x": x, "w": w, "xz": q((), np.uint8), "wz": q((5,), np.uint8)}, ["y"], opset=10)


def _scales(*shapes, dt=np.float32):
    return [(R.random(s) * 0.05 + 0.01).astype(dt) for s in shapes]


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("opset", [10, 21])
def test_qlinear_matmul(dt, opset):
    a, w = q((3, 4), dt), q((4, 5), dt)
    sa, sw, sy = _scales((), (), ())
    sy = np.float32(sy * 40)
    feeds = {"a": a, "sa": sa, "za": q((), dt), "w": w, "sw": sw, "zw": q((), dt),
             "sy": np.array(sy, np.float32), "zy": q((), dt)}
    check([N("QLinearMatMul", list(feeds), ["y"])], feeds, ["y"], opset=opset)


def test_qlinear_matmul_3d_f16_scales():
    a, w = q((2, 3, 4), np.uint8), q((2, 4, 5), np.uint8)
    sa, sw, sy = _scales((), (), (), dt=np.float16)
    feeds = {"a": a, "sa": sa, "za": q((), np.uint8), "w": w, "sw": sw,
             "zw": q((), np.uint8), "sy": (sy * 40).astype(np.float16), "zy": q((), np.uint8)}
    check([N("QLinearMatMul", list(feeds), ["y"])], feeds, ["y"], opset=21)


@pytest.mark.parametrize("dt", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qlinear_conv(dt, per_channel):
    x, w = q((1, 3, 6, 5), dt), q((4, 3, 3, 3), dt)
    sx, sw, sy = _scales((), (4,) if per_channel else (), ())
    feeds = {"x": x, "sx": sx, "zx": q((), dt), "w": w, "sw": sw,
             "zw": q((4,), dt) if per_channel and dt == np.uint8 else q((), dt),
             "sy": (sy * 60).astype(np.float32), "zy": q((), dt),
             "bias": R.integers(-500, 500, (4,)).astype(np.int32)}
    check([N("QLinearConv", list(feeds), ["y"], pads=[1, 1, 1, 1], strides=[1, 2])], feeds,
          ["y"], opset=10)


@pytest.mark.parametrize("case", ["mixed", "positive", "negative", "zeros"])
def test_dynamic_quantize_linear(case):
    x = R.standard_normal((3, 7)).astype(np.float32) * 4
    x = {"mixed": x, "positive": np.abs(x), "negative": -np.abs(x),
         "zeros": np.zeros_like(x)}[case]
    check([N("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])], {"x": x}, ["y", "s", "z"],
          opset=11)


def test_qlinear_matmul_per_column_b():
    # per-column scale and zero point of B (1-D, N elements)
    a, w = q((3, 4), np.uint8), q((4, 5), np.uint8)
    sa, sw, sy = _scales((), (5,), ())
    feeds = {"a": a, "sa": sa, "za": q((), np.uint8), "w": w, "sw": sw,
             "zw": q((5,), np.uint8), "sy": (sy * 40).astype(np.float32),
             "zy": q((), np.uint8)}
    check([N("QLinearMatMul", list(feeds), ["y"])], feeds, ["y"], opset=21)


# -- every input dim dynamic: a zero point / scale of size [?] that is 1 at run
# time is per tensor (it used to be read per row/column, out of bounds) --------
def _dyn(names_types, ranks):
    return [(n, t, [f"{n}{k}" for k in range(r)]) for (n, t), r in zip(names_types, ranks)]


@pytest.mark.parametrize("dt,et", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
def test_matmul_integer_dynamic_zero_points(tmp_path, dt, et):
    from dynamic_util import check_shapes, model
    m = model([N("MatMulInteger", ["a", "w", "az", "wz"], ["y"])],
              _dyn([("a", et), ("w", et), ("az", et), ("wz", et)], [2, 2, 1, 1]), opset=10)
    check_shapes(tmp_path, m, [
        {"a": q((4, 3), dt), "w": q((3, 2), dt), "az": q((1,), dt), "wz": q((1,), dt)},
        {"a": q((2, 5), dt), "w": q((5, 6), dt), "az": q((1,), dt), "wz": q((6,), dt)}])


@pytest.mark.parametrize("dt,et", [(np.uint8, TensorProto.UINT8), (np.int8, TensorProto.INT8)])
def test_qlinear_matmul_dynamic_scales(tmp_path, dt, et):
    from dynamic_util import check_shapes, model
    F = TensorProto.FLOAT
    ins = [("a", et), ("sa", F), ("za", et), ("w", et), ("sw", F), ("zw", et),
           ("sy", F), ("zy", et)]
    m = model([N("QLinearMatMul", [n for n, _ in ins], ["y"])],
              _dyn(ins, [3, 1, 1, 3, 1, 1, 1, 1]), opset=10)

    def feeds(sa, sw):
        s = lambda n: (R.random(n) * 0.05 + 0.01).astype(np.float32)  # noqa: E731
        return {"a": q(sa, dt), "sa": s(1), "za": q((1,), dt), "w": q(sw, dt),
                "sw": s(1), "zw": q((1,), dt), "sy": s(1) * 20, "zy": q((1,), dt)}
    check_shapes(tmp_path, m, [feeds((2, 2, 4), (2, 4, 3)), feeds((1, 3, 2), (3, 2, 5))])


def test_matmul_integer_dynamic_zero_point_size_is_checked(tmp_path):
    from dynamic_util import check_rejects, model
    et, dt = TensorProto.UINT8, np.uint8
    m = model([N("MatMulInteger", ["a", "w", "az", "wz"], ["y"], name="mmi")],
              _dyn([("a", et), ("w", et), ("az", et), ("wz", et)], [2, 2, 1, 1]), opset=10)
    check_rejects(tmp_path, m, [
        {"a": q((4, 3), dt), "w": q((3, 2), dt), "az": q((1,), dt), "wz": q((3,), dt)}],
        r"node 'mmi' \(MatMulInteger\).*zero point")
