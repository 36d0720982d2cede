"""fuse-qdq-conv (passes/optimize_onnx/quantize.py): on a target with int8
kernels (AVX-512 VNNI) a QDQ conv group runs as QLinearConv on the int8
kernels (passes/optimize/conv_q8.py).

* Models made by onnxruntime.quantization.quantize_static (QDQ, S8
  per-channel weights, U8 and S8 activations) of a small residual CNN: at
  -O3 every conv uses the int8 kernel (on a VNNI CPU), and the output agrees
  with onnxruntime's optimized session (which computes the same groups in
  integers) at least as well as onnxruntime's own unoptimized session
  does; the fractions are in the message.
* A hand-made group with a ReLU before the Q (Clip(., zy) after QLinearConv)
  and a quantized int32 bias: -O3 equals the f32 QDQ semantics (-O0) within
  one output step, and equals onnxruntime's optimized session.
* Without VNNI (hidden) nothing is rewritten: -O3 is the f32 path."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.isa import HIDE_ENV, host_has
from onnx_mlir_py.runtime import ExecutionSession

ort = pytest.importorskip("onnxruntime")
VNNI = host_has("avx512vnni") and host_has("avx512f")


def _cnn(rng) -> onnx.ModelProto:
    inits, nodes = [], []

    def conv(name, x, cin, cout, k, relu=True, stride=1):
        w = (rng.standard_normal((cout, cin, k, k)) * (2 / (cin * k * k)) ** 0.5).astype(np.float32)
        inits.extend([nh.from_array(w, name + "_W"),
                      nh.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), name + "_B")])
        nodes.append(h.make_node("Conv", [x, name + "_W", name + "_B"], [name],
                                 pads=[k // 2] * 4, strides=[stride] * 2))
        if not relu:
            return name
        nodes.append(h.make_node("Relu", [name], [name + "_r"]))
        return name + "_r"
    a = conv("c1", "x", 8, 16, 3)
    b = conv("c2", a, 16, 16, 3, relu=False)
    nodes += [h.make_node("Add", [b, a], ["s"]), h.make_node("Relu", ["s"], ["sr"])]
    c = conv("c3", "sr", 16, 32, 1, stride=2)
    nodes.append(h.make_node("GlobalAveragePool", [c], ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 12, 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.fixture(scope="module", params=["u8", "s8"])
def qdq_model(request, tmp_path_factory):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    rng = np.random.default_rng(3)
    d = tmp_path_factory.mktemp("qdq")
    onnx.save(_cnn(rng), d / "f.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": rng.standard_normal((1, 8, 12, 12)).astype(np.float32)}
                            for _ in range(4)])

        def get_next(self):
            return next(self.it, None)
    act = QuantType.QUInt8 if request.param == "u8" else QuantType.QInt8
    quantize_static(str(d / "f.onnx"), str(d / "q.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=act, weight_type=QuantType.QInt8)
    return onnx.load(d / "q.onnx")


def _ort(m, x, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def _uses_vnni(sess) -> bool:
    """An int8 kernel ran: VNNI's, or on a CPU with AMX-INT8 its AMX kernel
    (matmul_q8_amx.py: the matmuls and the im2col convs' matmuls)."""
    feats = (sess.target or {}).get("features", [])
    return "avx512vnni" in feats or "amx-int8" in feats


def test_quantize_static_model(qdq_model, tmp_path):
    sess = ExecutionSession(onnx_mlir_py.compile(qdq_model, tmp_path / "m.so", opt_level=3))
    assert _uses_vnni(sess) == VNNI
    for seed in (1, 2):
        x = np.random.default_rng(seed).standard_normal((1, 8, 12, 12)).astype(np.float32)
        got = sess.run([x])[0]
        opt = _ort(qdq_model, x, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        plain = _ort(qdq_model, x, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        ours, theirs = np.abs(got - opt), np.abs(opt - plain)
        msg = (f"ours vs ort optimized: max {ours.max():.3g}, {(ours > 0).mean():.1%} differ; "
               f"ort optimized vs unoptimized: max {theirs.max():.3g}, {(theirs > 0).mean():.1%}")
        assert ours.max() <= theirs.max() + 1e-6 and (ours > 0).mean() <= (theirs > 0).mean(), msg


def _relu_group():
    """DQ(x u8) -> Conv(DQ(w s8 per channel), DQ(b int32)) -> Relu -> Q (u8, zy 100)."""
    rng = np.random.default_rng(9)
    f, c = 16, 8
    sx, sw = np.float32(0.05), (rng.random(f) * 0.02 + 0.005).astype(np.float32)
    inits = [nh.from_array(np.array(sx), "sx"), nh.from_array(np.array(120, np.uint8), "zx"),
             nh.from_array(rng.integers(-127, 128, (f, c, 3, 3)).astype(np.int8), "wq"),
             nh.from_array(sw, "sw"), nh.from_array(np.zeros(f, np.int8), "zw"),
             nh.from_array(rng.integers(-2000, 2000, f).astype(np.int32), "bq"),
             nh.from_array((sx * sw).astype(np.float32), "sb"),
             nh.from_array(np.array(0.4, np.float32), "sy"),
             nh.from_array(np.array(100, np.uint8), "zy")]
    nodes = [h.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xd"]),
             h.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=0),
             h.make_node("DequantizeLinear", ["bq", "sb"], ["bd"], axis=0),
             h.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"]),
             h.make_node("QuantizeLinear", ["r", "sy", "zy"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.UINT8, [1, c, 9, 9])],
                     [h.make_tensor_value_info("y", T.UINT8, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_relu_group(tmp_path):
    m = _relu_group()
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    assert _uses_vnni(s3) == VNNI
    x = np.random.default_rng(1).integers(0, 256, (1, 8, 9, 9)).astype(np.uint8)
    got, f32_path = s3.run([x])[0], s0.run([x])[0]
    assert got.min() >= 100                 # the ReLU: nothing below the zero point
    diff = np.abs(got.astype(int) - f32_path.astype(int))
    assert diff.max() <= 1, f"{(diff > 0).mean():.1%} differ from the f32 QDQ path"
    opt = _ort(m, x, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    if VNNI:        # both compute the group in integers
        np.testing.assert_array_equal(got, opt)


def test_no_rewrite_without_vnni(tmp_path, monkeypatch):
    from onnx_mlir_py import target
    monkeypatch.setenv(HIDE_ENV, "avx512vnni")
    target.resolve.cache_clear()
    try:
        m = _relu_group()
        s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
        s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
        assert not _uses_vnni(s3)
        x = np.random.default_rng(1).integers(0, 256, (1, 8, 9, 9)).astype(np.uint8)
        np.testing.assert_array_equal(s3.run([x])[0], s0.run([x])[0])
    finally:
        monkeypatch.delenv(HIDE_ENV)
        target.resolve.cache_clear()
