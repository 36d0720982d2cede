"""-O3 depthwise convs of QDQ models on 8-bit data (passes/optimize/depthwise_q8.py):
models 1x1 conv -> ReLU6 -> depthwise 3x3 quantized in the test by
onnxruntime.quantization.quantize_static (S8/S8 and U8/S8, per channel and
per tensor, stride 1 and 2, a ReLU6 inserted between the depthwise conv and
its QuantizeLinear, a dynamic batch run at two sizes). The plan must give
the depthwise conv to ``depthwise_q8`` (and to ``depthwise_rows`` with the
kernel off), and the output is compared with onnxruntime's optimized
session and with our -O0 build.

Tolerance: the kernel computes the unfused f32 ops (dequantize, f32 taps on
the dequantized weights, bias, requantize), not onnxruntime's exact integer
sum (the 8-bit weights are folded to f32 before lowering), so an output
may differ by one quantization step where the f32 sum falls near a rounding
boundary: never by more, and on at most MAX_OFF of the elements (measured
on these models: none, against onnxruntime's optimized and unoptimized
sessions and against -O0; the bound leaves room for other CPUs' rounding
of the f32 sums).
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

import onnx_mlir_py
from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.options import Options
from onnx_mlir_py.passes.optimize import depthwise_q8
from onnx_mlir_py.runtime import ExecutionSession

MAX_OFF = 0.01


def _float_model(c_in: int, c: int, hw: tuple, stride: int, batch, pad: int = 1) -> onnx.ModelProto:
    """x -> Conv 1x1 (+ bias) -> Clip(0, 6) -> depthwise 3x3 "dw" (+ bias) -> y."""
    r = np.random.default_rng(3)
    init = [nh.from_array((r.standard_normal((c, c_in, 1, 1)) * 0.5).astype(np.float32), "w1"),
            nh.from_array(r.standard_normal(c).astype(np.float32) * 0.2, "b1"),
            nh.from_array((r.standard_normal((c, 1, 3, 3)) * 0.4).astype(np.float32), "w2"),
            nh.from_array(r.standard_normal(c).astype(np.float32) * 0.2, "b2"),
            nh.from_array(np.array(0.0, np.float32), "lo"),
            nh.from_array(np.array(6.0, np.float32), "hi")]
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["a"], name="pw", kernel_shape=[1, 1]),
             h.make_node("Clip", ["a", "lo", "hi"], ["b"], name="relu6"),
             h.make_node("Conv", ["b", "w2", "b2"], ["y"], name="dw", group=c, kernel_shape=[3, 3],
                         pads=[pad] * 4, strides=[stride, stride])]
    g = h.make_graph(nodes, "dw", [h.make_tensor_value_info("x", T.FLOAT, [batch, c_in, *hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], init)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


class _Reader(CalibrationDataReader):
    def __init__(self, shape):
        r = np.random.default_rng(7)
        self.data = iter([{"x": r.standard_normal(shape).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


def _relu6_before_q(m: onnx.ModelProto) -> None:
    """A Clip(0, 6) between the depthwise conv and its QuantizeLinear (the
    quantizer folds activations into the QuantizeLinear's range)."""
    dw = next(n for n in m.graph.node if n.name == "dw")
    out = dw.output[0]
    dw.output[0] = out + "_pre"
    m.graph.node.insert(list(m.graph.node).index(dw) + 1,
                        h.make_node("Clip", [out + "_pre", "lo", "hi"], [out], name="dw_relu6"))
    if not any(i.name == "lo" for i in m.graph.initializer):
        m.graph.initializer.extend([nh.from_array(np.array(0.0, np.float32), "lo"),
                                    nh.from_array(np.array(6.0, np.float32), "hi")])


def _quantized(tmp_path, act: QuantType, per_channel: bool, stride: int, batch, relu6=False,
               c_in=8, c=32, hw=(19, 21), pad=1) -> tuple[str, tuple]:
    shape = (batch if isinstance(batch, int) else 2, c_in, *hw)
    src, dst = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(_float_model(c_in, c, hw, stride, batch, pad), src)
    quantize_static(str(src), str(dst), _Reader(shape), quant_format=QuantFormat.QDQ,
                    activation_type=act, weight_type=QuantType.QInt8, per_channel=per_channel)
    if relu6:
        m = onnx.load(dst)
        _relu6_before_q(m)
        onnx.save(m, dst)
    return str(dst), shape


def _step(path: str) -> float:
    """The scale of the QuantizeLinear that quantizes the model's output."""
    m = onnx.load(path)
    q = next(n for n in m.graph.node if n.op_type == "QuantizeLinear"
             and n.output[0] in {i for d in m.graph.node if d.op_type == "DequantizeLinear"
                                 and d.output[0] == m.graph.output[0].name for i in d.input})
    return float(nh.to_array(next(i for i in m.graph.initializer if i.name == q.input[1])))


def _ort(path: str, x: np.ndarray) -> np.ndarray:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]


def _compile(path: str, out: str, kernel: str) -> ExecutionSession:
    plans = []
    run_pipeline(path, Options(emit="EmitLib", opt_level=3), out, on_plan=plans.append)
    got = {e.node: e.kernel for p in plans for e in p.entries}
    assert got["dw"] == kernel, got
    return ExecutionSession(out)


def _close(got: np.ndarray, want: np.ndarray, step: float) -> float:
    """Fraction of elements one quantization step off (none more)."""
    assert got.shape == want.shape
    off = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert off.max() <= step * 1.001, (off.max(), step)
    return float(np.mean(off > step * 0.5))


@pytest.mark.parametrize("act, per_channel, stride, relu6, pad", [
    (QuantType.QInt8, True, 1, False, 1),          # MobileNetV2's S8/S8 per channel
    (QuantType.QInt8, True, 2, True, 1),           # strided, ReLU6 before the QuantizeLinear
    (QuantType.QUInt8, False, 1, True, 1),         # U8/S8 per tensor
    (QuantType.QUInt8, True, 2, False, 1),
    (QuantType.QInt8, False, 2, False, 0),         # no pad: the plane copy all the same
])
def test_qdq_depthwise(tmp_path, act, per_channel, stride, relu6, pad):
    path, shape = _quantized(tmp_path, act, per_channel, stride, 1, relu6, pad=pad)
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    s3 = _compile(path, str(tmp_path / "m3.so"), "depthwise_q8")
    s0 = ExecutionSession(onnx_mlir_py.compile(path, tmp_path / "m0.so", opt_level=0))
    got, want, o0 = s3.run([x])[0], _ort(path, x), s0.run([x])[0]
    step = _step(path)
    assert _close(got, want, step) <= MAX_OFF
    assert _close(got, o0, step) <= MAX_OFF
    assert _close(o0, want, step) <= MAX_OFF        # -O0: the f32 path, as before


@pytest.mark.parametrize("stride", [1, 2])
def test_qdq_depthwise_large_plane(tmp_path, stride):
    """A 100x99 map: the plane (above 32 KiB) is copied row by row, each
    input row just before the output rows that read it."""
    path, shape = _quantized(tmp_path, QuantType.QInt8, True, stride, 1, c_in=2, c=4,
                             hw=(100, 99))
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32)
    s3 = _compile(path, str(tmp_path / "m3.so"), "depthwise_q8")
    assert _close(s3.run([x])[0], _ort(path, x), _step(path)) <= MAX_OFF


def test_qdq_depthwise_dynamic_batch(tmp_path):
    """A dynamic batch (the kernel loops over the images), at 1 and 3
    images, against onnxruntime and the static model's kernel per image."""
    path, _ = _quantized(tmp_path, QuantType.QInt8, True, 2, "N")
    s3 = _compile(path, str(tmp_path / "m3.so"), "depthwise_q8")
    step = _step(path)
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 8, 19, 21)).astype(np.float32)
        got = s3.run([x])[0]
        assert got.shape[0] == n
        assert _close(got, _ort(path, x), step) <= MAX_OFF


def test_qdq_depthwise_threads(tmp_path):
    """A conv big enough for channel blocks (an scf.forall), run on 2 threads."""
    path, shape = _quantized(tmp_path, QuantType.QUInt8, True, 1, 1, c=64, hw=(40, 40))
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    plans = []
    out = str(tmp_path / "m3.so")
    run_pipeline(path, Options(emit="EmitLib", opt_level=3), out, on_plan=plans.append)
    dw = next(e for e in plans[0].entries if e.node == "dw")
    assert dw.kernel == "depthwise_q8" and dw.threaded
    got = ExecutionSession(out, num_threads=2).run([x])[0]
    assert _close(got, _ort(path, x), _step(path)) <= MAX_OFF


def test_kernel_off_keeps_f32_path(tmp_path, monkeypatch):
    """With the kernel off the plan gives the conv to the f32 row kernel;
    the 8-bit kernel then differs from it in rounding only."""
    path, shape = _quantized(tmp_path, QuantType.QInt8, True, 1, 1)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    on = _compile(path, str(tmp_path / "on.so"), "depthwise_q8").run([x])[0]
    monkeypatch.setattr(depthwise_q8, "ENABLED", False)
    off = _compile(path, str(tmp_path / "off.so"), "depthwise_rows").run([x])[0]
    assert _close(on, off, _step(path)) <= MAX_OFF


@pytest.mark.parametrize("act, hw", [
    (QuantType.QInt8, (19, 21)),        # a row's last read masked (21 % 16 columns)
    (QuantType.QUInt8, (18, 32)),       # whole-vector rows, 16 output columns
    (QuantType.QInt8, (15, 17)),        # 8 output columns: in-lane shuffle reads, not split
])
def test_qdq_depthwise_stride2_split_and_magic_exact(tmp_path, monkeypatch, act, hw):
    """Stride 2: the split scratch plane (``row_plan.split``: even and odd
    padded columns in two halves) and the magic-number requantization of
    whole-vector stores (``epilogue_q8.MAGIC_ROUND``) give the same bytes as
    the shuffled strided reads and roundeven; and onnxruntime's output
    within one quantization step."""
    from onnx_mlir_py.passes.optimize import epilogue_q8, row_kernel, row_plan, row_plane
    path, shape = _quantized(tmp_path, act, True, 2, 1, True, hw=hw)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    on = _compile(path, str(tmp_path / "on.so"), "depthwise_q8").run([x])[0]
    assert _close(on, _ort(path, x), _step(path)) <= MAX_OFF
    for mod in (row_kernel, row_plan, row_plane):
        monkeypatch.setattr(mod, "split", lambda cv: False)
    monkeypatch.setattr(epilogue_q8, "MAGIC_ROUND", False)
    off = _compile(path, str(tmp_path / "off.so"), "depthwise_q8").run([x])[0]
    np.testing.assert_array_equal(on, off)


def test_split_takes_8bit_convs():
    """``row_plan.split`` takes an 8-bit conv's stride-2 rows (``cv.quant``)
    as the f32 ones: wider than 8 output columns, dilation 1."""
    from onnx_mlir_py.passes.optimize.row_plan import Conv, split
    cv = Conv((1, 96, 112, 112), (0, 0, 1, 1), 3, 3, (1, 96, 56, 56), (2, 2), (1, 1), "scalar",
              quant=object())
    assert split(cv)
    assert not split(Conv((1, 8, 14, 14), (1, 1, 1, 1), 3, 3, (1, 8, 7, 7), (2, 2), (1, 1),
                          "scalar", quant=object()))
