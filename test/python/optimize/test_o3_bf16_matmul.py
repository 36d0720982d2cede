"""-O3 bf16 matmuls on AVX512-BF16 (passes/optimize/matmul_bf16.py): the
contraction of ``--precision bf16`` (bf16 inputs, f32 result, constant B),
built here as tensor-level IR (the truncf of an f32 input times a bf16
constant, as the mode's lowering makes it), compiled and run against numpy
on the bf16-rounded inputs with f64 accumulation: dynamic M at several run
sizes (register tiles, 4-row tiles, single rows), odd K, N not a multiple of
16 or 32, a transposed B (Gemm transB), 1 and 2 threads, non-finite inputs.
On a CPU with AVX512-BF16 the kernel must be used (vdpbf16ps in the
library); a target without it must leave the matmul alone."""
from __future__ import annotations

import ml_dtypes
import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.isa import host_has
from onnx_mlir_py.passes.optimize import optimize
from onnx_mlir_py.passes.optimize.matmul_bf16 import KERNEL, constant_bits
from onnx_mlir_py.target import target_for

BF16 = host_has("avx512bf16") and host_has("avx512f")
needs_bf16 = pytest.mark.skipif(not BF16, reason="the host has no AVX512-BF16 to run the kernel")


def _bits(w: np.ndarray) -> np.ndarray:
    return w.astype(ml_dtypes.bfloat16).view(np.uint16)


def mixed_matmul(k: int, n: int, w: np.ndarray, transposed: bool = False) -> str:
    """``main_graph(x: [?, K] f32) -> [?, N] f32``: truncf(x) @ B (bf16
    constant ``w``: [K, N], or [N, K] read through a linalg.transpose)."""
    bt = f"tensor<{w.shape[0]}x{w.shape[1]}xbf16>"
    hexs = "0x" + _bits(w).astype("<u2").tobytes().hex().upper()
    b = "%b"
    tr = ""
    if transposed:
        tr = (f"%et = tensor.empty() : tensor<{k}x{n}xbf16>\n"
              f"  %bt = linalg.transpose ins(%b : {bt}) outs(%et : tensor<{k}x{n}xbf16>) "
              "permutation = [1, 0]")
        b = "%bt"
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main_graph(%x: tensor<?x{k}xf32>) -> tensor<?x{n}xf32> {{
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x{k}xf32>
  %e = tensor.empty(%m) : tensor<?x{k}xbf16>
  %a = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%x : tensor<?x{k}xf32>) outs(%e : tensor<?x{k}xbf16>) {{
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }} -> tensor<?x{k}xbf16>
  %b = arith.constant dense<"{hexs}"> : {bt}
  {tr}
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty(%m) : tensor<?x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%ec : tensor<?x{n}xf32>) -> tensor<?x{n}xf32>
  %r = linalg.matmul ins(%a, {b} : tensor<?x{k}xbf16>, tensor<{k}x{n}xbf16>)
      outs(%f : tensor<?x{n}xf32>) -> tensor<?x{n}xf32>
  return %r : tensor<?x{n}xf32>
}}"""


def _build(tmp_path, k, n, *, transposed=False, threads=False, cpu="znver4", seed=0):
    """(session, plan, B as f32 [K, N] of bf16 values)."""
    from onnx_mlir_py.codegen import emit_library
    from onnx_mlir_py.runtime import ExecutionSession
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, k) if transposed else (k, n)).astype(np.float32)
    with ir.Context():
        mod = ir.Module.parse(mixed_matmul(k, n, w, transposed))
        plan = optimize(mod, target_for(cpu), threads=threads)
        path = tmp_path / "m.so"
        emit_library(mod, path, mcpu=cpu)
    wb = w.astype(ml_dtypes.bfloat16).astype(np.float32)
    return ExecutionSession(str(path)), plan, wb.T if transposed else wb, path


def _check(got: np.ndarray, x: np.ndarray, w: np.ndarray) -> None:
    """``got`` against the bf16-rounded inputs multiplied in f64: within f32
    rounding of the sum of |products| (vdpbf16ps adds in another order)."""
    xb = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    want = xb @ w.astype(np.float64)
    bound = np.abs(xb) @ np.abs(w.astype(np.float64))
    k = x.shape[1]
    np.testing.assert_array_less(np.abs(got - want), bound * k * 2.0 ** -23 + 1e-30)


@needs_bf16
@pytest.mark.parametrize("k,n,transposed", [
    (64, 64, False),        # 8 x 32 tiles
    (21, 48, False),        # odd K (a zero past K), N = 3 x 16 (16-column blocks)
    (40, 40, True),         # transposed B, N not a multiple of 16 (zero columns)
    (1, 16, False),         # K = 1: the peeled pair only
])
def test_bf16_matmul(tmp_path, k, n, transposed):
    sess, plan, w, path = _build(tmp_path, k, n, transposed=transposed)
    assert [e.kernel for e in plan.entries] == [KERNEL]
    import subprocess
    assert "vdpbf16ps" in subprocess.run(["objdump", "-d", str(path)], capture_output=True,
                                         text=True).stdout
    for m in (1, 4, 5, 8, 13, 37):       # single rows, 4-row tiles, full tiles + tails
        x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
        got = sess.run([x])[0]
        assert got.shape == (m, n)
        _check(got, x, w)


@needs_bf16
def test_bf16_matmul_two_threads(tmp_path):
    from onnx_mlir_py.runtime import ExecutionSession
    _, plan, w, path = _build(tmp_path, 256, 512, threads=True, seed=2)
    assert plan.entries[0].kernel == KERNEL and plan.entries[0].threaded
    sess = ExecutionSession(str(path), num_threads=2)
    for m in (3, 64, 77):
        x = np.random.default_rng(m).standard_normal((m, 256)).astype(np.float32)
        _check(sess.run([x])[0], x, w)


@needs_bf16
def test_bf16_matmul_non_finite(tmp_path):
    """inf and NaN inputs give inf / NaN where the reference has them."""
    sess, _, w, _ = _build(tmp_path, 16, 32, seed=3)
    x = np.random.default_rng(4).standard_normal((9, 16)).astype(np.float32)
    x[1, 3], x[4, 0], x[7, 15] = np.inf, np.nan, -np.inf
    got = sess.run([x])[0]
    want = x.astype(ml_dtypes.bfloat16).astype(np.float64) @ w.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-5, atol=1e-5)


def test_target_without_bf16_keeps_the_matmul():
    """x86-64-v4 (no AVX512-BF16): not this kernel, no x86vector op."""
    w = np.ones((8, 32), np.float32)
    with ir.Context():
        mod = ir.Module.parse(mixed_matmul(8, 32, w))
        plan = optimize(mod, target_for("x86-64-v4"), threads=False)
        assert KERNEL not in [e.kernel for e in plan.entries]
        assert "x86vector" not in str(mod)


@pytest.mark.parametrize("form", ["hex", "decimal", "splat", "resource"])
def test_constant_bits(form):
    """B's bf16 bits are read from each form of constant the lowering makes."""
    from onnx_mlir_py.ir_resources import resource_attr
    rng = np.random.default_rng(5)
    w = (np.full((3, 5), -1.5, np.float32) if form == "splat" else
         rng.standard_normal((40, 40) if form in ("hex", "resource") else (3, 5)).astype(np.float32))
    bits = _bits(w)
    with ir.Context(), ir.Location.unknown():
        t = ir.RankedTensorType.get(list(w.shape), ir.BF16Type.get())
        attr = resource_attr(np.ascontiguousarray(bits), "w", t) if form == "resource" else \
            ir.DenseElementsAttr.get(bits, type=t)
        if form == "hex":
            assert '"0x' in str(attr)
        if form == "decimal":
            assert '"0x' not in str(attr)
        from mlir.dialects import arith
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            c = arith.ConstantOp(t, attr)
        np.testing.assert_array_equal(constant_bits(c.operation), bits)


# -- convs (passes/optimize/conv_bf16.py) -------------------------------------------------

def mixed_conv(xs, w: np.ndarray, s: int, p: int, d: int) -> str:
    """``main_graph(x: xs f32)``: conv_2d_nchw_fchw of the padded truncf(x)
    and the bf16 constant ``w`` into an f32 zero fill (the mode's lowering)."""
    n, c, h, wd = xs
    f, _, kh, kw = w.shape
    hp, wp = h + 2 * p, wd + 2 * p
    oh, ow = (hp - d * (kh - 1) - 1) // s + 1, (wp - d * (kw - 1) - 1) // s + 1
    xt, xpt = f"tensor<{n}x{c}x{h}x{wd}x", f"tensor<{n}x{c}x{hp}x{wp}xbf16>"
    ot = f"tensor<{n}x{f}x{oh}x{ow}xf32>"
    hexs = "0x" + _bits(w).astype("<u2").tobytes().hex().upper()
    return f"""
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main_graph(%x: {xt}f32>) -> {ot} {{
  %e = tensor.empty() : {xt}bf16>
  %a = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%x : {xt}f32>) outs(%e : {xt}bf16>) {{
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }} -> {xt}bf16>
  %ap = tensor.pad %a low[0, 0, {p}, {p}] high[0, 0, {p}, {p}] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    %zb = arith.constant 0.0 : bf16
    tensor.yield %zb : bf16
  }} : {xt}bf16> to {xpt}
  %w = arith.constant dense<"{hexs}"> : tensor<{f}x{c}x{kh}x{kw}xbf16>
  %z = arith.constant 0.0 : f32
  %ec = tensor.empty() : {ot}
  %fl = linalg.fill ins(%z : f32) outs(%ec : {ot}) -> {ot}
  %r = linalg.conv_2d_nchw_fchw {{dilations = dense<{d}> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
      ins(%ap, %w : {xpt}, tensor<{f}x{c}x{kh}x{kw}xbf16>) outs(%fl : {ot}) -> {ot}
  return %r : {ot}
}}"""


def _conv_ref(x, w, s, p, d):
    """onnx.reference's Conv of the bf16-rounded input and filters."""
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx.reference import ReferenceEvaluator
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["y"], pads=[p] * 4, strides=[s, s],
                                  dilations=[d, d])], "g",
                     [h.make_tensor_value_info("x", TP.DOUBLE, None),
                      h.make_tensor_value_info("w", TP.DOUBLE, None)],
                     [h.make_tensor_value_info("y", TP.DOUBLE, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    r = lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float64)  # noqa: E731
    return ReferenceEvaluator(m).run(None, {"x": r(x), "w": r(w)})[0], \
        ReferenceEvaluator(m).run(None, {"x": np.abs(r(x)), "w": np.abs(r(w))})[0]


@needs_bf16
@pytest.mark.parametrize("xs,f,k,s,p,d,threads", [
    ((1, 3, 17, 17), 8, 3, 1, 1, 1, False),     # odd C (a zero channel), 8 filters (zero columns)
    ((1, 16, 9, 9), 40, 3, 2, 1, 1, False),     # stride 2, 81 pixels (transpose blocks padded)
    ((2, 5, 8, 8), 16, 1, 1, 0, 1, False),      # two images, 1x1
    ((1, 8, 12, 12), 32, 3, 1, 2, 2, False),    # dilation 2
    ((1, 64, 14, 14), 64, 3, 1, 1, 1, True),    # threads
])
def test_bf16_conv(tmp_path, xs, f, k, s, p, d, threads):
    from onnx_mlir_py.codegen import emit_library
    from onnx_mlir_py.passes.optimize.conv_bf16 import KERNEL as CONV
    from onnx_mlir_py.runtime import ExecutionSession
    rng = np.random.default_rng(f)
    w = rng.standard_normal((f, xs[1], k, k)).astype(np.float32)
    with ir.Context():
        mod = ir.Module.parse(mixed_conv(xs, w, s, p, d))
        plan = optimize(mod, target_for("znver4"), threads=threads)
        assert [e.kernel for e in plan.entries] == [CONV]
        emit_library(mod, tmp_path / "c.so", mcpu="znver4")
    sess = ExecutionSession(str(tmp_path / "c.so"), num_threads=2 if threads else 1)
    x = rng.standard_normal(xs).astype(np.float32)
    got = sess.run([x])[0]
    want, bound = _conv_ref(x, w, s, p, d)
    assert got.shape == want.shape
    kk = xs[1] * k * k
    np.testing.assert_array_less(np.abs(got - want), bound * kk * 2.0 ** -23 + 1e-30)


def test_transpose_text_blocks():
    """The transpose of the conv's [pixels, filters] result: 16x16 register
    blocks, then the last 81 - 80 = 1 pixel as a [1, 16] block."""
    from onnx_mlir_py.passes.optimize.conv_bf16 import transpose_text
    text = transpose_text("t", 81, 32, False)
    assert "vector.transpose" in text and "vector<1x16xf32>" in text


def test_conv_and_matmul_kernels_in_one_module():
    """Regression: the matmul and conv steps each numbered their kernel
    functions from 0, so the conv called the matmul's kernel (ResNet-50's
    FC and stem: 'incorrect number of operands for callee')."""
    rng = np.random.default_rng(6)
    conv = mixed_conv((1, 4, 6, 6), rng.standard_normal((16, 4, 3, 3)).astype(np.float32), 1, 1, 1)
    mm = mixed_matmul(8, 16, rng.standard_normal((8, 16)).astype(np.float32)).replace(
        "@main_graph", "@fc").replace("#id =", "#id2 =").replace("#id,", "#id2,").replace("#id]", "#id2]")
    with ir.Context():
        mod = ir.Module.parse(conv + mm)
        plan = optimize(mod, target_for("znver4"), threads=False)
        assert sorted(e.kernel for e in plan.entries) == ["conv_bf16", KERNEL]
        assert mod.operation.verify()


@needs_bf16
def test_precision_bf16_end_to_end(tmp_path):
    """``compile(precision="bf16")`` of Conv -> Relu -> Flatten -> Gemm: the
    library needs avx512bf16 (both kernels ran) and matches onnx.reference on
    the bf16-rounded input and weights (the Relu's output rounded again
    before the Gemm, as the mode's truncf does)."""
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    from onnx.reference import ReferenceEvaluator

    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    rng = np.random.default_rng(7)
    w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32)
    cb = rng.standard_normal(16).astype(np.float32)
    g = rng.standard_normal((10, 16 * 36)).astype(np.float32)
    gb = rng.standard_normal(10).astype(np.float32)
    nodes = [h.make_node("Conv", ["x", "W", "CB"], ["c"], pads=[1] * 4),
             h.make_node("Relu", ["c"], ["r"]), h.make_node("Flatten", ["r"], ["f"]),
             h.make_node("Gemm", ["f", "G", "GB"], ["y"], transB=1)]
    model = h.make_model(h.make_graph(
        nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 6, 6])],
        [h.make_tensor_value_info("y", TP.FLOAT, None)],
        initializer=[nh.from_array(a, n) for a, n in ((w, "W"), (cb, "CB"), (g, "G"), (gb, "GB"))]),
        opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    so = onnx_mlir_py.compile(model, tmp_path / "m.so", opt_level=3, precision="bf16")
    sess = ExecutionSession(so)
    assert "avx512bf16" in sess.target["features"]
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    r = lambda a: a.astype(ml_dtypes.bfloat16).astype(np.float32)  # noqa: E731
    conv_relu = ReferenceEvaluator(h.make_model(h.make_graph(
        nodes[:3], "g", [h.make_tensor_value_info("x", TP.FLOAT, None)],
        [h.make_tensor_value_info("f", TP.FLOAT, None)],
        initializer=[nh.from_array(r(w), "W"), nh.from_array(cb, "CB")]),
        opset_imports=[h.make_opsetid("", 17)])).run(None, {"x": r(x)})[0]
    want = r(conv_relu).astype(np.float64) @ r(g).astype(np.float64).T + gb
    got = sess.run([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
