"""-O3 im2col convs: big ones in strips of output rows (passes/optimize/
conv_strips.py: whole strips, a remainder strip, bias fused or not, batch 2,
a dynamic batch) and strided im2col rows in 16-column chunks (a loop over
the chunks every tap can read whole, then static chunks: short reads at the
row's end, a tail). Compared with onnxruntime at 1 and 2 threads (the
strips split across the pool)."""
from __future__ import annotations

import numpy as np
import pytest

from onnx_mlir_py.passes.optimize.kernel_plan import strip_rows
from onnx_mlir_py.target import target_for
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import N, Cases, compile_with_ort, pool_task_count, rand

pytest.importorskip("onnxruntime")

# (C, F, kernel, stride, pad, dilation, bias, SiLU after, H = W, cut in strips)
CONVS = [(3, 8, 3, 2, 1, 1, True, True, 420, True),     # 210 rows: strips of 19, 1 left
         (2, 5, 3, 1, 1, 1, False, False, 212, True),   # no bias: accumulates into the fill
         (3, 4, 6, 2, 2, 1, True, False, 300, True),    # the YOLO stem's 6x6/2
         (3, 6, 3, 2, 0, 1, True, False, 75, False),    # OW 37: 2 chunks in the loop + tail
         (4, 6, 4, 3, 1, 2, False, False, 117, False),  # stride 3, dilation 2
         (2, 3, 3, 2, 1, 1, True, False, 9, False)]     # OW 5: one short chunk


def _out(hw, k, s, p, d):
    return (hw + 2 * p - (k - 1) * d - 1) // s + 1


def _model(batch):
    c = Cases()
    for i, (ci, f, k, s, p, d, bias, silu, hw, _strips) in enumerate(CONVS):
        c.input(f"x{i}", [batch, ci, hw, hw])
        c.weight(f"w{i}", rand(f, ci, k, k))
        c.weight(f"b{i}", rand(f))
        out = f"y{i}"
        conv = out + "_c" if silu else out
        c.nodes.append(N("Conv", [f"x{i}", f"w{i}"] + ([f"b{i}"] if bias else []), [conv],
                         kernel_shape=[k, k], strides=[s, s], pads=[p] * 4, dilations=[d, d]))
        if silu:
            c.nodes += [N("Sigmoid", [conv], [out + "_s"]), N("Mul", [conv, out + "_s"], [out])]
        c.outputs.append(out)
    m = c.model()
    m.ir_version = 10
    return m


def test_the_big_convs_are_cut():
    kb = target_for("x86-64-v4").matmul_tile[2]
    for ci, f, k, s, p, d, _b, _s, hw, strips in CONVS:
        o = _out(hw, k, s, p, d)
        r = strip_rows([1, ci, hw + 2 * p, hw + 2 * p], [f, ci, k, k], [1, f, o, o], [s, s], kb)
        assert (r is not None) == strips, (ci, f, k, hw)
    assert strip_rows([1, 3, 422, 422], [8, 3, 3, 3], [1, 8, 210, 210], [2, 2], kb) == 19


@pytest.mark.parametrize("batch,runs", [(1, [1]), (2, [2]), ("N", [1, 2])])
def test_convs_in_strips_match_onnxruntime(tmp_path, batch, runs):
    m = _model(batch)
    so, ref = compile_with_ort(tmp_path, m)
    sess = ExecutionSession(so)
    tasks = pool_task_count(so)
    for threads in (1, 2):          # 2: the strips split across the pool
        sess.set_num_threads(threads)
        for n in runs:
            feeds = {f"x{i}": rand(n, cv[0], cv[8], cv[8]) for i, cv in enumerate(CONVS)}
            before = tasks()
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            assert (tasks() > before) == (threads > 1)
            want = ref.run(None, feeds)
            for name, g, w in zip(m.graph.output, got, want):
                assert g.shape == w.shape, name.name
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name.name} N={n} threads {threads}")
