"""fuse-qdq-gemm (passes/optimize_onnx/quantize.py): on a target with int8
kernels (AVX-512 VNNI) a QDQ Gemm group (a QDQ CNN's classifier head)
becomes onnxruntime's QGemm and runs on the int8 matmul kernel
(passes/optimize/matmul_q8.py) instead of multiplying dequantized f32
weights.

* Hand-made groups (per-column s8 weights, transB 1 and 0, an int32 bias
  behind a DequantizeLinear, float output or a QuantizeLinear after it,
  N = 1000): the plan gives the matmul the host's int8 kernel (``int8_amx``
  on an AMX machine, else ``int8_vnni``); the output equals
  onnxruntime's optimized session (which fuses the same group into QGemm)
  and is within one output step (quantized) or float rounding (float) of
  the f32 QDQ semantics (-O0).
* A group it must leave alone (alpha != 1) keeps the f32 Gemm and still
  matches -O0."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.isa import host_has
from onnx_mlir_py.options import Options
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import resolve

ort = pytest.importorskip("onnxruntime")
VNNI = host_has("avx512vnni") and host_has("avx512f")
K, N = 128, 1000
INT8_KERNELS = ("int8_amx", "int8_vnni")


def _host_int8_kernel():
    """The int8 matmul kernel -O3 picks on this machine: the AMX one where
    the host target has AMX-INT8 (and the OS grants tile data), else VNNI."""
    return "int8_amx" if resolve(host_default=True).amx_int8 else "int8_vnni"


def _group(trans_b=1, quantized=False, alpha=1.0, bias=True):
    rng = np.random.default_rng(11 + trans_b + 2 * quantized)
    sx, sw = np.float32(0.04), (rng.random(N) * 0.01 + 0.002).astype(np.float32)
    w = rng.integers(-127, 128, (N, K) if trans_b else (K, N)).astype(np.int8)
    inits = [nh.from_array(np.array(sx), "sx"), nh.from_array(np.array(9, np.uint8), "zx"),
             nh.from_array(w, "wq"), nh.from_array(sw, "sw"),
             nh.from_array(np.zeros(N, np.int8), "zw"),
             nh.from_array(rng.integers(-4000, 4000, N).astype(np.int32), "bq"),
             nh.from_array((sx * sw).astype(np.float32), "sb"),
             nh.from_array(np.array(0.25, np.float32), "sy"),
             nh.from_array(np.array(120, np.uint8), "zy")]
    nodes = [h.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xd"]),
             h.make_node("DequantizeLinear", ["wq", "sw", "zw"], ["wd"], axis=0 if trans_b else 1),
             h.make_node("DequantizeLinear", ["bq", "sb"], ["bd"], axis=0),
             h.make_node("Gemm", ["xd", "wd"] + (["bd"] if bias else []), ["g"],
                         transB=trans_b, alpha=alpha)]
    out = "g"
    if quantized:
        nodes.append(h.make_node("QuantizeLinear", ["g", "sy", "zy"], ["y"]))
        out = "y"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.UINT8, ["m", K])],
                     [h.make_tensor_value_info(out, T.UINT8 if quantized else T.FLOAT, None)],
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _plan(m):
    plans = []
    with redirect_stdout(io.StringIO()):
        run_pipeline(m, Options(emit="EmitLib", opt_level=3), None, print_ir=True,
                     on_plan=plans.append)
    return [e.kernel for e in plans[0].entries if "matmul" in e.op]


def _run_both(tmp_path, m):
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for rows in (1, 5):
        x = np.random.default_rng(rows).integers(0, 256, (rows, K)).astype(np.uint8)
        yield s3.run([x])[0], s0.run([x])[0], ref.run(None, {"x": x})[0]


@pytest.mark.skipif(not VNNI, reason="the int8 kernels need AVX-512 VNNI (this CPU has none)")
@pytest.mark.parametrize("trans_b, quantized, bias", [(1, False, True), (0, False, True),
                                                      (1, True, True), (1, False, False)])
def test_qdq_gemm_runs_on_the_int8_kernel(tmp_path, trans_b, quantized, bias):
    m = _group(trans_b, quantized, bias=bias)
    assert _plan(m) == [_host_int8_kernel()]
    for got, f32_path, opt in _run_both(tmp_path, m):
        np.testing.assert_array_equal(got, opt)
        if quantized:
            d = np.abs(got.astype(int) - f32_path.astype(int))
            assert d.max() <= 1, f"{(d > 0).mean():.2%} one step off the f32 QDQ path"
        else:
            np.testing.assert_allclose(got, f32_path, rtol=1e-5, atol=1e-4)


def test_groups_it_leaves_alone(tmp_path):
    """alpha 0.5: not rewritten (f32 Gemm), same numbers as -O0."""
    m = _group(alpha=0.5)
    assert not set(_plan(m)) & set(INT8_KERNELS)
    for got, f32_path, _ in _run_both(tmp_path, m):
        np.testing.assert_allclose(got, f32_path, rtol=1e-5, atol=1e-4)
