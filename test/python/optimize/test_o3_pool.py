"""-O3 MaxPool / AveragePool on the depthwise row kernel
(passes/optimize/pool.py): the pad (-inf / 0) fused into the per-plane
scratch, the fill as the accumulators' start, AveragePool's constant
division as the epilogue. 1-D pools run as 2-D ones of an H = 1 view.
Compared with onnxruntime at two static sizes and at a dynamic batch."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import N, Cases, compile_with_ort, rand

pytest.importorskip("onnxruntime")

# (op, kernel, strides, pads (begins + ends), dilations, extra attributes)
POOLS2 = [("MaxPool", [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], {}),       # ResNet stem
          ("MaxPool", [5, 5], [1, 1], [2, 2, 2, 2], [1, 1], {}),       # YOLO SPPF
          ("MaxPool", [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], {}),
          ("MaxPool", [3, 2], [1, 3], [0, 1, 2, 0], [2, 1], {}),       # dilated, asymmetric
          ("MaxPool", [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], {"ceil_mode": 1}),
          ("AveragePool", [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], {"count_include_pad": 1}),
          ("AveragePool", [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], {}),
          ("AveragePool", [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], {})]  # divisor per position
POOLS1 = [("MaxPool", [3], [3], [0, 0], [1], {}),                     # text-CNN
          ("MaxPool", [4], [2], [1, 2], [2], {}),
          ("AveragePool", [3], [1], [1, 1], [1], {"count_include_pad": 1})]
POOLS = POOLS2 + POOLS1


def _model(n, hw):
    """One input per pool: [n, 6, *hw] (2-D) or [n, 6, hw[1]] (1-D)."""
    c = Cases()
    for i, (op, k, s, p, d, extra) in enumerate(POOLS):
        c.input(f"x{i}", [n, 6] + (list(hw) if len(k) == 2 else [hw[1]]))
        kw = dict(kernel_shape=k, strides=s, pads=p, **extra)
        if d != [1] * len(d):
            kw["dilations"] = d
        c.nodes.append(N(op, [f"x{i}"], [f"y{i}"], **kw))
        c.outputs.append(f"y{i}")
    m = c.model()
    m.ir_version = 10
    return m


def _check(tmp_path, m, shapes):
    so, ref = compile_with_ort(tmp_path, m)
    sess = ExecutionSession(so)
    for n, hw in shapes:
        feeds = {f"x{i}": rand(n, 6, *(hw if len(k) == 2 else hw[1:]))
                 for i, (_op, k, *_r) in enumerate(POOLS)}
        got = sess.run([feeds[s.name] for s in sess.input_specs])
        want = ref.run(None, feeds)
        for name, g, w in zip([o.name for o in m.graph.output], got, want):
            assert g.shape == w.shape, (name, n, hw)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{name} at {n}, {hw}")


# (70, 130): scratch planes above 32 KiB, copied row by row (row_kernel.INTERLEAVE_MIN_PLANE)
@pytest.mark.parametrize("hw", [(7, 9), (20, 37), (70, 130)])
def test_pools_static(tmp_path, hw):
    _check(tmp_path, _model(2, hw), [(2, hw)])


def test_pools_dynamic_batch(tmp_path):
    _check(tmp_path, _model("N", (11, 40)), [(1, (11, 40)), (3, (11, 40))])


def test_pools_take_the_row_kernel(tmp_path):
    """Every pool became the row kernel: no pooling op or loop-nest
    reduction is left, the -inf pad was fused into the scratch (no
    tensor.pad), AveragePool's constant division fused as the epilogue."""
    from onnx_mlir_py.passes.optimize.pool import pools
    from onnx_mlir_py.target import target_for
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_model(2, (20, 37)), output=path, opt_level=3, emit="EmitMLIR")
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        # the SPPF 5x5 stride-1 MaxPool is lowered as two pools (1x5, then 5x1)
        assert pools(module, target_for("x86-64-v4")) == len(POOLS) + 1
        text = str(module)
        assert "linalg.pooling" not in text and '"reduction"' not in text
        assert "tensor.pad" not in text
        # the one generic left: the division of the pool with a per-position divisor
        assert text.count("linalg.generic") == 1
        assert "0xFF800000" in text                 # the scratch filled with -inf


def test_wide_window_keeps_the_generic_code(tmp_path):
    """A window of more than MAX_TAPS taps is not given the row kernel (it
    unrolls every tap: a 1x200 MaxPool made 7.4 MB of kernel text and the
    inliner ran for minutes, test_MaxPool1d_stride_padding_dilation) and still
    matches onnxruntime."""
    from onnx_mlir_py.passes.optimize.depthwise import MAX_TAPS
    from onnx_mlir_py.passes.optimize.pool import pools
    from onnx_mlir_py.target import target_for
    c = Cases()
    c.input("x", [1, 2, 2600])
    c.nodes.append(N("MaxPool", ["x"], ["y"], kernel_shape=[200], strides=[10],
                     pads=[100, 100], dilations=[10]))
    c.outputs.append("y")
    m = c.model()
    m.ir_version = 10
    assert 200 > MAX_TAPS
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(m, output=path, opt_level=3, emit="EmitMLIR")
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        assert pools(ir.Module.parse(path.read_text()), target_for("x86-64-v4")) == 0
    so, ref = compile_with_ort(tmp_path, m)
    x = rand(1, 2, 2600)
    got = ExecutionSession(so).run([x])[0]
    np.testing.assert_allclose(got, ref.run(None, {"x": x})[0], rtol=1e-6, atol=0)
