"""-O3 1-D convs: the Conv lowering views a rank-3 conv as the 2-D conv of
[N, C, 1, L], so they run on the 2-D kernels (im2col + packed matmul,
grouped, depthwise; conv_dyn.py for a dynamic length) instead of a naive
loop nest. Compared with onnxruntime: static lengths (one compile each) and
a dynamic batch and length (one compile, several run-time shapes)."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import Cases, compile_with_ort, rand

pytest.importorskip("onnxruntime")

# (C, F, kernel, stride, (pad begin, pad end), dilation, group, bias, relu after)
CONVS = [(8, 16, 7, 1, (3, 3), 1, 1, True, True),     # text-CNN style
         (6, 8, 3, 2, (1, 0), 1, 1, False, False),    # strided, asymmetric pads
         (4, 6, 3, 1, (2, 2), 2, 1, True, False),     # dilated
         (5, 7, 1, 1, (0, 0), 1, 1, True, False),     # pointwise
         (3, 5, 4, 3, (0, 2), 1, 1, True, True),      # stride 3, kernel 4
         (8, 12, 3, 2, (1, 1), 1, 4, True, False),    # grouped
         (8, 8, 5, 1, (2, 2), 1, 8, True, True)]      # depthwise
PLAIN = sum(g == 1 for *_, g, _b, _r in CONVS)


def _model(length):
    """One input per conv: [N, C, length] (a str: dynamic)."""
    c = Cases()
    for i, (ci, f, k, s, (p0, p1), d, g, bias, relu) in enumerate(CONVS):
        c.input(f"x{i}", ["N" if isinstance(length, str) else 2, ci,
                          f"L{i}" if isinstance(length, str) else length])
        c.weight(f"w{i}", rand(f, ci // g, k))
        c.weight(f"b{i}", rand(f))
        c.conv(i, bias, relu, kernel_shape=[k], strides=[s], pads=[p0, p1], dilations=[d],
               group=g)
    m = c.model()
    m.ir_version = 10
    return m


def _check(tmp_path, m, shapes, threads=(1,)):
    so, ref = compile_with_ort(tmp_path, m)
    for t in threads:
        sess = ExecutionSession(so, num_threads=t)
        for n, length in shapes:
            feeds = {}
            for i, (ci, _f, k, _s, (p0, p1), d, *_rest) in enumerate(CONVS):
                least = max(1, (k - 1) * d + 1 - p0 - p1)    # at least one output
                feeds[f"x{i}"] = rand(n, ci, max(length, least))
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip([o.name for o in m.graph.output], got, want):
                assert g.shape == w.shape, (name, n, length)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} at N={n} L={length}, {t} threads")


@pytest.mark.parametrize("length", [13, 64])
def test_conv1d_static(tmp_path, length):
    _check(tmp_path, _model(length), [(2, length)])


def test_conv1d_dynamic_batch_and_length(tmp_path):
    # output lengths around the kernels' 16/32-column blocks, a length-1 input
    _check(tmp_path, _model("L"), [(1, 1), (2, 15), (1, 33), (3, 64), (1, 100)], threads=(1, 2))


def _lowered(tmp_path, length):
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_model(length), output=path, opt_level=3, emit="EmitMLIR")
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        return ctx, ir.Module.parse(path.read_text())


def test_conv1d_takes_the_2d_kernels(tmp_path):
    """Static: every 1-D conv became a 2-D one that the depthwise kernel or
    im2col + matmul rewrites (no conv and no naive loop nest is left);
    dynamic length: the plain ones go to the dynamic-spatial kernel."""
    from onnx_mlir_py.passes.optimize.conv import convs_to_matmul
    from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
    from onnx_mlir_py.passes.optimize.depthwise import depthwise_convs
    from onnx_mlir_py.target import target_for
    ctx, module = _lowered(tmp_path, 40)
    with ctx, ir.Location.unknown():
        assert depthwise_convs(module, target_for("x86-64-v4")) == 1
        assert convs_to_matmul(module) == len(CONVS) - 1
        text = str(module)
        assert "linalg.conv" not in text and "linalg.depthwise_conv" not in text
        assert '"reduction"' not in text          # no loop-nest convolution
    ctx, module = _lowered(tmp_path, "L")
    with ctx, ir.Location.unknown():
        assert dynamic_convs_to_matmul(module, target_for("x86-64-v4")) == PLAIN
        assert "linalg.conv_2d_nchw_fchw" not in str(module)
