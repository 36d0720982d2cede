"""-O3 SiLU (x * sigmoid(x), the Sigmoid and the Mul both reading the conv)
fused into the dynamic-H/W conv kernels: conv_dyn's copy out and
depthwise_dyn's row kernel (:func:`passes.optimize.epilogue.dynamic_chain`,
the exp as math_approx's polynomial). EfficientNet-B0 exported with dynamic
N, H, W left every SiLU after its convs as a separate pass through memory.

Cases: a 3x3 conv with a bias, a bias-free 1x1 conv whose Mul reads
sigmoid(x) first, a depthwise conv with a bias; not fused: a SiLU whose
Sigmoid is also an output, and a depthwise SiLU followed by a residual add
(the chain stops at the SiLU: the add reads another tensor). Compiled once,
run at two run-time shapes, 1 and 2 threads, against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import N, Cases, compile_with_ort, rand

pytest.importorskip("onnxruntime")


def _silu(c: Cases, x: str, y: str, sig_first: bool = False, sig_out: str = "") -> None:
    s = sig_out or y + "_s"
    c.nodes.append(N("Sigmoid", [x], [s]))
    c.nodes.append(N("Mul", [s, x] if sig_first else [x, s], [y]))


def _model():
    c = Cases()
    # 0: 3x3 conv + bias + SiLU
    c.input("x0", ["N", 8, "H", "W"])
    c.weight("w0", rand(16, 8, 3, 3))
    c.weight("b0", rand(16))
    c.nodes.append(N("Conv", ["x0", "w0", "b0"], ["c0"], kernel_shape=[3, 3], pads=[1] * 4))
    _silu(c, "c0", "y0")
    # 1: 1x1 conv, no bias, Mul(sigmoid(x), x)
    c.input("x1", ["N", 8, "H", "W"])
    c.weight("w1", rand(24, 8, 1, 1))
    c.nodes.append(N("Conv", ["x1", "w1"], ["c1"], kernel_shape=[1, 1]))
    _silu(c, "c1", "y1", sig_first=True)
    # 2: depthwise 3x3 (stride 2) + bias + SiLU
    c.input("x2", ["N", 16, "H", "W"])
    c.weight("w2", rand(16, 1, 3, 3))
    c.weight("b2", rand(16))
    c.nodes.append(N("Conv", ["x2", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4,
                     strides=[2, 2], group=16))
    _silu(c, "c2", "y2")
    # 3: not fused: the Sigmoid is an output too
    c.input("x3", ["N", 8, "H", "W"])
    c.weight("w3", rand(8, 8, 3, 3))
    c.nodes.append(N("Conv", ["x3", "w3"], ["c3"], kernel_shape=[3, 3], pads=[1] * 4))
    _silu(c, "c3", "y3", sig_out="s3")
    # 4: depthwise SiLU, then a residual add of the input (fused: the SiLU only)
    c.input("x4", ["N", 16, "H", "W"])
    c.weight("w4", rand(16, 1, 3, 3))
    c.nodes.append(N("Conv", ["x4", "w4"], ["c4"], kernel_shape=[3, 3], pads=[1] * 4,
                     group=16))
    _silu(c, "c4", "y4_m")
    c.nodes.append(N("Add", ["y4_m", "x4"], ["y4"]))
    c.outputs += ["y0", "y1", "y2", "y3", "s3", "y4"]
    m = c.model()
    m.ir_version = 10
    return m


def test_dynamic_conv_silu_against_onnxruntime(tmp_path):
    m = _model()
    so, ref = compile_with_ort(tmp_path, m)
    # wide values: the sigmoid's exp over its range (and its clamp)
    check_shapes(m, so, ref, np.random.default_rng(35), 4.0)


def check_shapes(m, so, ref, rng, scale: float = 1.0) -> None:
    """``so`` against onnxruntime's ``ref`` at 1x?x9x17 and 2x?x30x41 (every
    input [N, C, H, W]), normal values times ``scale``, 1 and 2 threads."""
    for t in (1, 2):
        sess = ExecutionSession(so, num_threads=t)
        for n, hh, ww in ((1, 9, 17), (2, 30, 41)):
            feeds = {s.name: (rng.standard_normal((n, s.shape[1], hh, ww)) * scale)
                     .astype(np.float32) for s in sess.input_specs}
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip(m.graph.output, got, want):
                assert g.shape == w.shape, (name.name, n, hh, ww)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name.name} at {n}x{hh}x{ww}, {t} threads")


def test_dynamic_conv_silu_is_fused(tmp_path):
    """After the dynamic kernels, the only Sigmoid left as a generic is the
    one that is an output (case 3), with its Mul; the residual add stays;
    no other elementwise generic on a conv's result is left. The fused
    kernels' exp is math_approx's polynomial (no math.exp on vectors)."""
    import mlir.ir as ir
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.optimize import dynamic_pools, resolve_dims
    from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
    from onnx_mlir_py.target import target_for
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_model(), output=path, opt_level=3, emit="EmitMLIR")
    target = target_for("x86-64-v4")
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        resolve_dims(module)
        assert dynamic_pools(module, target) == 2
        assert dynamic_convs_to_matmul(module, target) == 3
        left = []
        for op in walk_ops(module.operation):
            # (a tensor<?xCx?x?xf32>: the model's; the kernels' own are static but for a dim)
            if op.name == "linalg.generic" and str(op.results[0].type).startswith("tensor<?x"):
                body = tuple(o.name for o in op.regions[0].blocks[0].operations)
                if "linalg.index" not in body:    # (the Add's run-time broadcast branches)
                    left.append(body)
        assert sorted(left) == sorted([
            ("arith.negf", "math.exp", "arith.addf", "arith.divf", "linalg.yield"),
            ("arith.mulf", "linalg.yield"),
            ("arith.addf", "linalg.yield")]), left
        text = str(module)
        assert not [ln for ln in text.splitlines() if "math.exp" in ln and "vector<" in ln]
