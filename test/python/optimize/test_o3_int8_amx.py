"""-O3 int8 matmuls and im2col convs on AMX-INT8 (passes/optimize/matmul_q8_amx.py):
MatMulInteger, QLinearMatMul and QLinearConv (the im2col form: few pixels per
row) with u8 and s8 activations, K not a multiple of 64 (A copied into
zero-padded blocks) and a multiple (A read in place), N not a multiple of
16, M below a 32-row block and dynamic M at several sizes, a static M below
16 (stays on VNNI), 1 and 2 threads. Exact against onnxruntime /
onnx.reference, and bit-identical to the VNNI kernel (AMX hidden). On a CPU
with AMX-INT8 (and the OS's permission) the library must use the kernel
(it records amx-int8); the plan rule must not take it on Zen 4."""
from __future__ import annotations

import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.isa import HIDE_ENV
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import target_for
from onnx_mlir_py.testing.check import reference

from test_o3_int8_conv import _x, qlinear_conv
from test_o3_int8_matmul import _feed, matmul_integer, qlinear_matmul

AMX = target_for("native").amx_int8
needs_amx = pytest.mark.skipif(not AMX, reason="no AMX-INT8 on this CPU (or the OS refuses it)")


def _features(sess) -> list:
    return (sess.target or {}).get("features", [])


def _compile(m, path, threads=None) -> ExecutionSession:
    so = onnx_mlir_py.compile(m, path, opt_level=3)
    return ExecutionSession(so) if threads is None else ExecutionSession(so, num_threads=threads)


def _vnni_session(m, path, monkeypatch) -> ExecutionSession:
    """``m`` compiled with AMX hidden from the -O3 host target (the VNNI kernels)."""
    from onnx_mlir_py import target
    monkeypatch.setenv(HIDE_ENV, "amx_tile amx_int8 amx_bf16")
    target.resolve.cache_clear()
    try:
        s = _compile(m, path)
    finally:
        monkeypatch.delenv(HIDE_ENV)
        target.resolve.cache_clear()
    assert "amx-int8" not in _features(s) and "avx512vnni" in _features(s)
    return s


@needs_amx
@pytest.mark.parametrize("signed_a,zp,rank3,k,n", [
    (False, True, False, 128, 64),      # u8 with a zero point, K in place (2 K steps)
    (True, True, False, 64, 32),        # s8 (tdpbssd) with a zero point
    (False, False, True, 96, 48),       # 3-D A, K = 96 (padded blocks), 3 column tiles
    (True, False, False, 30, 40),       # K not a multiple of 4, N not of 16
    (False, True, False, 1100, 80),     # K past 8 steps (C stored / reloaded), tail 12 bytes
])
def test_matmul_integer(tmp_path, monkeypatch, signed_a, zp, rank3, k, n):
    m = matmul_integer(k, n, signed_a, zp, rank3, seed=k)
    sess = _compile(m, tmp_path / "amx.so")
    assert "amx-int8" in _features(sess) and "amx-tile" in _features(sess)
    vnni = _vnni_session(m, tmp_path / "vnni.so", monkeypatch)
    for rows in (1, 15, 32, 45, 70):    # part blocks, one block, block + part
        shape = (2, rows, k) if rank3 else (rows, k)
        a = _feed(shape, signed_a, rows)
        got = sess.run([a])[0]
        np.testing.assert_array_equal(got, reference(m, {"a": a}, "onnxruntime")[0],
                                      err_msg=str(shape))
        np.testing.assert_array_equal(got, vnni.run([a])[0], err_msg=str(shape))


@needs_amx
@pytest.mark.parametrize("k,n", [
    (256, 256),     # A in place, 16 column tiles: 2 column groups per row block
    (128, 80),      # A in place, 5 column tiles: the odd one in the last group
    (96, 80),       # A copied per block (K not whole steps): no column groups
])
def test_two_threads(tmp_path, k, n):
    m = matmul_integer(k, n, False, True, False, seed=3)
    sess = _compile(m, tmp_path / "m.so", threads=2)
    assert "amx-int8" in _features(sess)
    for rows in (3, 32, 64, 77, 200):
        a = _feed((rows, k), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0],
                                      reference(m, {"a": a}, "onnxruntime")[0])


@needs_amx
def test_qlinear_matmul(tmp_path):
    m = qlinear_matmul(128, 64)
    sess = _compile(m, tmp_path / "m.so")
    assert "amx-int8" in _features(sess)
    for rows in (5, 24, 33):
        a = _feed((rows, 128), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0], reference(m, {"a": a})[0])


@needs_amx
def test_static_rows_below_16_stay_on_vnni(tmp_path):
    """A static M below 16 would fill a 32-row block with padding: VNNI's."""
    m = matmul_integer(64, 32, False, True, False)
    dim = m.graph.input[0].type.tensor_type.shape.dim[0]
    dim.ClearField("dim_param")
    dim.dim_value = 4
    sess = _compile(m, tmp_path / "m.so")
    assert "amx-int8" not in _features(sess) and "avx512vnni" in _features(sess)
    a = _feed((4, 64), False, 2)
    np.testing.assert_array_equal(sess.run([a])[0], reference(m, {"a": a}, "onnxruntime")[0])


@needs_amx
@pytest.mark.parametrize("kw", [
    dict(c=64, f=32, hw=7, k=3),                        # K = 576: A (the im2col) in place
    dict(c=20, f=48, hw=7, k=3, signed=True),           # K = 180: padded blocks, s8
    dict(c=16, f=16, hw=14, k=3, stride=2, batch=2),    # strided, 2 images (98 rows)
    dict(c=8, f=32, hw=(4, 5), k=1, pads=[0, 0, 0, 0]),  # 1x1, 20 pixels: one part block
])
def test_qlinear_conv_im2col(tmp_path, monkeypatch, kw):
    m = qlinear_conv(**kw)
    sess = _compile(m, tmp_path / "amx.so")
    assert "amx-int8" in _features(sess)
    x = _x(m)
    got = sess.run([x])[0]
    np.testing.assert_array_equal(got, reference(m, {"x": x})[0])
    np.testing.assert_array_equal(got, _vnni_session(m, tmp_path / "vnni.so", monkeypatch).run([x])[0])


def test_plan_rule_by_target():
    """The rule reads target.amx_int8 only: Sapphire Rapids takes the kernel,
    Zen 4 (VNNI, no AMX) keeps int8_vnni."""
    import pathlib

    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.kernel_plan import plan_kernels
    lit = pathlib.Path(__file__).parents[2] / "lit" / "optimize" / "int8_amx_matmul.mlir"
    text = lit.read_text().split("// -----")[0]
    kernels = {}
    for cpu in ("sapphirerapids", "znver4"):
        with make_context():
            mod = ir.Module.parse(text)
            kernels[cpu] = [e.kernel for e in plan_kernels(mod, target_for(cpu), True).entries]
    assert kernels == {"sapphirerapids": ["int8_amx"], "znver4": ["int8_vnni"]}


@needs_amx
def test_deep_conv_takes_im2col_on_amx(tmp_path, monkeypatch):
    """A conv the direct VNNI kernel would take (24-pixel rows) with K = C*KH*KW
    at least conv_q8.AMX_IM2COL_MIN_K goes the im2col way to the AMX matmul;
    a shallow one stays direct (VNNI only); both exact and equal to VNNI's."""
    from onnx_mlir_py.passes.optimize import conv_q8
    deep = qlinear_conv(c=128, f=16, hw=24, k=3, seed=1)            # K = 1152
    shallow = qlinear_conv(c=16, f=16, hw=24, k=3, seed=2)          # K = 144
    assert 128 * 9 >= conv_q8.AMX_IM2COL_MIN_K > 16 * 9
    for m, amx_used in ((deep, True), (shallow, False)):
        sess = _compile(m, tmp_path / f"amx{amx_used}.so")
        assert ("amx-int8" in _features(sess)) == amx_used
        assert "avx512vnni" in _features(sess) or amx_used
        x = _x(m)
        got = sess.run([x])[0]
        np.testing.assert_array_equal(got, reference(m, {"x": x})[0])
        np.testing.assert_array_equal(
            got, _vnni_session(m, tmp_path / f"vnni{amx_used}.so", monkeypatch).run([x])[0])


@needs_amx
@pytest.mark.parametrize("act", ["u8", "s8"])
def test_qdq_conv_model(tmp_path, monkeypatch, act):
    """A QDQ model from onnxruntime's quantize_static (u8 or s8 activations,
    per-channel s8 weights) whose 128 -> 32 3x3 conv (K = 1152) runs on AMX:
    bit-identical to the VNNI build, and as close to onnxruntime's optimized
    (integer) run as onnxruntime's unoptimized run is."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((128, 8, 1, 1)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((32, 128, 3, 3)) * (2 / 1152) ** 0.5).astype(np.float32)
    g = h.make_graph([h.make_node("Conv", ["x", "W1", "B1"], ["c1"]),
                      h.make_node("Relu", ["c1"], ["r1"]),
                      h.make_node("Conv", ["r1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1]),
                      h.make_node("Relu", ["c2"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 8, 10, 10])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)],
                     initializer=[nh.from_array(w1, "W1"), nh.from_array(np.zeros(128, np.float32), "B1"),
                                  nh.from_array(w2, "W2"),
                                  nh.from_array((rng.standard_normal(32) * 0.1).astype(np.float32), "B2")])
    fm = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    fm.ir_version = 8
    onnx.save(fm, tmp_path / "f.onnx")
    feeds = [{"x": rng.standard_normal((1, 8, 10, 10)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)
    quantize_static(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8 if act == "u8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    m = onnx.load(tmp_path / "q.onnx")
    sess = _compile(m, tmp_path / "amx.so")
    assert "amx-int8" in _features(sess)
    vnni = _vnni_session(m, tmp_path / "vnni.so", monkeypatch)
    x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
    got = sess.run([x])[0]
    np.testing.assert_array_equal(got, vnni.run([x])[0])

    def run_ort(level):
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]
                                    ).run(None, {"x": x})[0]
    opt = run_ort(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    plain = run_ort(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert np.abs(got - opt).max() <= np.abs(opt - plain).max() + 1e-6
