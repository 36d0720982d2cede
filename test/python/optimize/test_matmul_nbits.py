"""-O3 weight-only 2/4/8-bit matmuls at decode shapes (passes/optimize/matmul_nbits.py,
the kernel plan's ``nbits_decode``) against onnxruntime's MatMulNBits
(accuracy_level 0: f32): M in {1, 3, 8}, bits 4 and 8 (and 2), blocks 16 / 32 / 128,
no / packed uint8 / float zero points, K not a multiple of the block (a
partial last block), N not a multiple of the kernel's column tile, 2-D and
3-D A; a model large enough to be split across threads (run at 1 and 2);
a bias and float16 A / scales / bias; models written by
MatMulNBitsQuantizer (symmetric and with zero points);
the plan gives every such matmul ``nbits_decode``; a dynamic M runs the
M = 1 kernel when M is 1 at run time (else dequantize-then-matmul); a static
M > 8 (or the kernel switched off) keeps that path, saying why."""
from __future__ import annotations

import copy

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.options import Options
from onnx_mlir_py.passes.optimize import matmul_nbits
from onnx_mlir_py.runtime import ExecutionSession

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
K = 200                     # 12.5 blocks of 16, 6.25 of 32, 1.6 of 128
# (bits, block, zero points: None / "u8" (packed) / "f32", N)
SPECS = [(4, 16, None, 48), (4, 32, "u8", 70), (4, 128, "f32", 33), (4, 32, "f32", 64),
         (4, 16, "u8", 16), (8, 16, "u8", 40), (8, 32, None, 96), (8, 128, "u8", 20),
         (2, 64, "u8", 24)]


def nbits_inits(name: str, k: int, n: int, bits: int, bs: int, zp, rng):
    """MatMulNBits' B, scales and zero points (flat, as the quantizer writes them)."""
    kb = -(-k // bs)
    inits = [nh.from_array(rng.integers(0, 256, (n, kb, bs * bits // 8)).astype(np.uint8),
                           f"{name}_B"),
             nh.from_array(rng.uniform(0.005, 0.05, n * kb).astype(np.float32), f"{name}_s")]
    if zp == "u8":
        inits.append(nh.from_array(rng.integers(0, 256, n * (-(-kb * bits // 8)))
                                   .astype(np.uint8), f"{name}_z"))
    elif zp == "f32":
        inits.append(nh.from_array(rng.uniform(0, (1 << bits) - 1, n * kb).astype(np.float32),
                                   f"{name}_z"))
    return inits


def nbits_model(a_shape: list, specs, seed: int = 0):
    rng = np.random.default_rng(seed)
    k = a_shape[-1]
    nodes, inits, outs = [], [], []
    for i, (bits, bs, zp, n) in enumerate(specs):
        ii = nbits_inits(f"q{i}", k, n, bits, bs, zp, rng)
        inits += ii
        nodes.append(h.make_node("MatMulNBits", ["A"] + [t.name for t in ii], [f"y{i}"],
                                 name=f"nbits{i}", domain=MS, K=k, N=n, bits=bits,
                                 block_size=bs))
        outs.append(h.make_tensor_value_info(f"y{i}", T.FLOAT, None))
    g = h.make_graph(nodes, "nbits", [h.make_tensor_value_info("A", T.FLOAT, a_shape)], outs,
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def build(tmp_path, m, name="m"):
    """(library path, kernel plan) of ``m`` at -O3."""
    plans = []
    so = run_pipeline(m, Options(emit="EmitLib", opt_level=3), str(tmp_path / f"{name}.so"),
                      on_plan=plans.append)
    return so, plans[0]


def kernels(plan) -> dict:
    return {e.node: e.kernel for e in plan.entries}


def check(so, m, feeds, threads=(1,)):
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for t in threads:
        got = ExecutionSession(so, num_threads=t).run(list(feeds.values()))
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            w = w.astype(np.float32)
            tol = 1e-3 if g.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(g.astype(np.float32), w, rtol=10 * tol,
                                       atol=tol * np.abs(w).max())


@pytest.mark.parametrize("a_shape", [[1, 1, K], [3, K], [1, 8, K]])
def test_nbits_decode_vs_onnxruntime(tmp_path, a_shape):
    m = nbits_model(a_shape, SPECS)
    so, plan = build(tmp_path, m)
    assert kernels(plan) == {f"nbits{i}": "nbits_decode" for i in range(len(SPECS))}
    a = np.random.default_rng(1).standard_normal(a_shape).astype(np.float32)
    check(so, m, {"A": a})


@pytest.mark.parametrize("elem", [T.FLOAT, T.FLOAT16])
def test_bias_and_float16(tmp_path, elem):
    """A bias (added after the kernel) and a float16 A, scales and bias
    (widened before it, the result rounded once)."""
    rng = np.random.default_rng(5)
    dt = np.float16 if elem == T.FLOAT16 else np.float32
    k, n = 72, 40
    b, s, z = nbits_inits("q", k, n, 4, 32, "u8", rng)
    s = nh.from_array(nh.to_array(s).astype(dt), "q_s")
    bias = nh.from_array(rng.standard_normal(n).astype(dt), "bias")
    g = h.make_graph([h.make_node("MatMulNBits", ["A", "q_B", "q_s", "q_z", "", "bias"], ["y"],
                                  name="nbits", domain=MS, K=k, N=n, bits=4, block_size=32)],
                     "g", [h.make_tensor_value_info("A", elem, [2, k])],
                     [h.make_tensor_value_info("y", elem, [2, n])], initializer=[b, s, z, bias])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(MS, 1)])
    m.ir_version = 8
    so, plan = build(tmp_path, m)
    assert kernels(plan) == {"nbits": "nbits_decode"}
    check(so, m, {"A": rng.standard_normal((2, k)).astype(dt)})


def test_threaded_tiles(tmp_path):
    """Weights large enough to split the column tiles across the pool; 1 and 2 threads."""
    m = nbits_model([1, 1, 1024], [(4, 32, "u8", 2048 + 64)])
    so, plan = build(tmp_path, m)
    (e,) = plan.entries
    assert e.kernel == "nbits_decode" and e.threaded, e.line()
    a = np.random.default_rng(2).standard_normal((1, 1, 1024)).astype(np.float32)
    check(so, m, {"A": a}, threads=(1, 2))


@pytest.mark.parametrize("symmetric", [True, False])
def test_matmul_nbits_quantizer(tmp_path, symmetric):
    """MatMulNBitsQuantizer's default (QOperator) format, without and with zero points."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    rng = np.random.default_rng(3)
    k, n = 160, 96
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["y"], name="mm")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 2, k])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 2, n])],
                     initializer=[nh.from_array(rng.standard_normal((k, n)).astype(np.float32),
                                                "W")])
    f = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    f.ir_version = 8
    quant = MatMulNBitsQuantizer(copy.deepcopy(f), bits=4, block_size=32, is_symmetric=symmetric)
    quant.process()
    q = quant.model.model
    (node,) = q.graph.node
    assert node.op_type == "MatMulNBits" and len(node.input) == (3 if symmetric else 4)
    so, plan = build(tmp_path, q)
    assert [e.kernel for e in plan.entries] == ["nbits_decode"]
    check(so, q, {"x": rng.standard_normal((1, 2, k)).astype(np.float32)})


def test_dynamic_m_dispatches_at_run_time(tmp_path):
    """A dynamic M (batch and sequence dims, as decode exports write A): the
    M = 1 kernel when M is 1 at run time, else dequantize-then-matmul; the
    M = 1 result is the static M = 1 model's, bit for bit (the same kernel)."""
    specs = [(4, 32, "u8", 70), (8, 16, None, 40)]
    m = nbits_model(["b", "s", K], specs)
    so, plan = build(tmp_path, m, "dyn")
    for e in plan.entries:
        assert e.kernel == "nbits_decode" and "M dynamic" in e.reason, e.line()
    rng = np.random.default_rng(4)
    one = rng.standard_normal((1, 1, K)).astype(np.float32)
    for a in (one, rng.standard_normal((2, 3, K)).astype(np.float32)):
        check(so, m, {"A": a})
    static, _ = build(tmp_path, nbits_model([1, 1, K], specs), "static")
    for g, w in zip(ExecutionSession(so).run([one]), ExecutionSession(static).run([one])):
        np.testing.assert_array_equal(g, w)


def test_large_m_and_disabled_keep_the_dequant_path(tmp_path, monkeypatch):
    """A static M above 8 (and the kernel switched off) keeps dequantize-then-
    matmul, and the plan's reason says why."""
    specs = [(4, 32, "u8", 64)]
    m = nbits_model([9, K], specs)
    so, plan = build(tmp_path, m, "m9")
    (e,) = plan.entries
    assert e.kernel != "nbits_decode" and "M = 9" in e.reason, e.line()
    a = np.random.default_rng(4).standard_normal((9, K)).astype(np.float32)
    check(so, m, {"A": a})
    monkeypatch.setattr(matmul_nbits, "ENABLED", False)
    m1 = nbits_model([1, K], specs)
    so, plan = build(tmp_path, m1, "off")
    (e,) = plan.entries
    assert e.kernel != "nbits_decode" and "nbits_decode: disabled" in e.reason, e.line()
    check(so, m1, {"A": a[:1]})
