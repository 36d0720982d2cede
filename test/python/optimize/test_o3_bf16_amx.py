"""-O3 bf16 contractions on AMX-BF16 (passes/optimize/matmul_bf16_amx.py,
tiles from amx_tiles.py): the kernel plan picks them for a target with
``amx_bf16`` (Sapphire / Emerald Rapids) and keeps the AVX512-BF16 ones for
Zen 4; on a host with AMX they are compiled and run against numpy on the
bf16-rounded inputs (f64 sums): matmuls with odd K, N not a multiple of 16,
dynamic M below a tile (M < 16), between tiles and past whole 32-row
blocks, a transposed B, 2 threads; convs 7x7 stride 2 with padding (the
ResNet stem), 1x1 (the pixels read as A), 1x1 stride 2, 3x3 with dilation,
a batch of 2, channels not a multiple of 32."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.passes.optimize import optimize
from onnx_mlir_py.passes.optimize.matmul_bf16 import KERNEL as AVX512_KERNEL
from onnx_mlir_py.passes.optimize.matmul_bf16_amx import KERNEL
from onnx_mlir_py.target import resolve, target_for

sys.path.insert(0, str(Path(__file__).parent))
from test_o3_bf16_matmul import _check, mixed_matmul  # noqa: E402

HOST = resolve(None, None, host_default=True)
needs_amx = pytest.mark.skipif(not HOST.amx_bf16,
                               reason="the host has no AMX-BF16 (or the OS refuses tile data)")
SPR = "sapphirerapids"


def _plan(k, n, cpu):
    w = np.random.default_rng(0).standard_normal((k, n)).astype(np.float32)
    with ir.Context():
        mod = ir.Module.parse(mixed_matmul(k, n, w))
        return optimize(mod, target_for(cpu), threads=False)


def test_plan_picks_amx_by_target():
    """The rule reads Target.amx_bf16: AMX on Sapphire Rapids, AVX512-BF16 on Zen 4."""
    assert [e.kernel for e in _plan(64, 32, SPR).entries] == [KERNEL]
    assert [e.kernel for e in _plan(64, 32, "znver4").entries] == [AVX512_KERNEL]


def _objdump(path) -> str:
    return subprocess.run(["objdump", "-d", str(path)], capture_output=True, text=True).stdout


def _build(tmp_path, k, n, *, transposed=False, threads=False, seed=0):
    from onnx_mlir_py.codegen import emit_library
    from onnx_mlir_py.runtime import ExecutionSession
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, k) if transposed else (k, n)).astype(np.float32)
    with ir.Context():
        mod = ir.Module.parse(mixed_matmul(k, n, w, transposed))
        plan = optimize(mod, target_for(SPR), threads=threads)
        path = tmp_path / "m.so"
        emit_library(mod, path, mcpu=SPR)
    wb = w.astype(ml_dtypes.bfloat16).astype(np.float32)
    return path, plan, wb.T if transposed else wb


@needs_amx
@pytest.mark.parametrize("k,n,transposed", [
    (64, 64, False),        # direct: A's rows are the tiles' (K a multiple of 32)
    (21, 48, False),        # odd K: rows copied, zeros past K; 3 column tiles (one odd)
    (40, 40, True),         # transposed B, N = 40 (zero columns to 48)
    (1, 16, False),         # K = 1
    (96, 8, False),         # N < 16
])
def test_amx_matmul(tmp_path, k, n, transposed):
    from onnx_mlir_py.runtime import ExecutionSession
    path, plan, w = _build(tmp_path, k, n, transposed=transposed)
    assert [e.kernel for e in plan.entries] == [KERNEL]
    assert "tdpbf16ps" in _objdump(path)
    sess = ExecutionSession(str(path))
    for m in (1, 5, 16, 31, 32, 33, 70):    # below a tile, tiles, whole blocks + a part block
        x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
        got = sess.run([x])[0]
        assert got.shape == (m, n)
        _check(got, x, w)


@needs_amx
@pytest.mark.parametrize("k,n", [
    (256, 512),     # A in place, the row blocks split across threads
    (96, 80),       # A in place (3 K steps), 5 column tiles (the odd one alone)
])
def test_amx_matmul_two_threads(tmp_path, k, n):
    from onnx_mlir_py.runtime import ExecutionSession
    path, plan, w = _build(tmp_path, k, n, threads=True, seed=2)
    assert plan.entries[0].kernel == KERNEL and plan.entries[0].threaded
    sess = ExecutionSession(str(path), num_threads=2)
    for m in (3, 32, 64, 77):
        x = np.random.default_rng(m).standard_normal((m, k)).astype(np.float32)
        _check(sess.run([x])[0], x, w)


def _conv_model(n, c, hw, f, k, s, p, d):
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    w = np.random.default_rng(2).standard_normal((f, c, k, k)).astype(np.float32)
    node = h.make_node("Conv", ["x", "w"], ["y"], pads=[p] * 4, strides=[s, s], dilations=[d, d])
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [n, c, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(w, "w")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), w


def _conv_f64(x, w, s, p, d):
    """(conv, conv of |x| and |w|) in f64, NCHW, by im2col."""
    n, c, hh, ww = x.shape
    f, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = (hh + 2 * p - d * (k - 1) - 1) // s + 1, (ww + 2 * p - d * (k - 1) - 1) // s + 1
    cols = np.stack([xp[:, :, i * d:i * d + s * (oh - 1) + 1:s, j * d:j * d + s * (ow - 1) + 1:s]
                     for i in range(k) for j in range(k)], axis=2)       # n, c, k*k, oh, ow
    cols = cols.reshape(n, c * k * k, oh * ow)
    wm = w.reshape(f, c * k * k)
    y = np.einsum("fk,nkp->nfp", wm, cols).reshape(n, f, oh, ow)
    b = np.einsum("fk,nkp->nfp", np.abs(wm), np.abs(cols)).reshape(n, f, oh, ow)
    return y, b


@needs_amx
@pytest.mark.parametrize("n,c,hw,f,k,s,p,d", [
    (1, 3, 32, 64, 7, 2, 3, 1),     # the ResNet stem: 7x7 stride 2, padding, C = 3 (odd)
    (1, 64, 9, 40, 1, 1, 0, 1),     # 1x1: the channels-last pixels are A; 81 pixels, F = 40
    (1, 64, 9, 48, 1, 2, 0, 1),     # 1x1 stride 2: im2col
    (1, 16, 11, 32, 3, 2, 1, 1),    # 3x3 stride 2
    (2, 5, 8, 16, 3, 1, 1, 1),      # a batch of 2
    (1, 8, 10, 24, 3, 1, 2, 2),     # dilation 2: one piece per tap
    (1, 96, 7, 48, 3, 1, 1, 1),     # 49 pixels (a part block), K = 864
])
def test_amx_conv(tmp_path, n, c, hw, f, k, s, p, d, threads=None):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    model, w = _conv_model(n, c, hw, f, k, s, p, d)
    so = onnx_mlir_py.compile(model, tmp_path / "c.so", opt_level=3, precision="bf16", mcpu=SPR)
    assert "tdpbf16ps" in _objdump(so)
    x = np.random.default_rng(c).standard_normal((n, c, hw, hw)).astype(np.float32)
    got = ExecutionSession(str(so), num_threads=threads).run([x])[0]
    bf = [a.astype(ml_dtypes.bfloat16).astype(np.float64) for a in (x, w)]
    want, bound = _conv_f64(*bf, s, p, d)
    assert got.shape == want.shape
    np.testing.assert_array_less(np.abs(got - want), bound * c * k * k * 2.0 ** -23 + 1e-30)
    assert np.abs(want).max() > 1       # not vacuous


@needs_amx
@pytest.mark.parametrize("n,c,hw,f,k,s,p,d", [
    (1, 64, 28, 80, 3, 1, 1, 1),    # 36M MACs (threaded), an im2col per block, 5 column tiles
    (1, 256, 7, 208, 1, 1, 0, 1),   # 1x1 on a 7x7 map: A in place, 2 row blocks
    (1, 512, 7, 80, 1, 1, 0, 1),    # the same (2M MACs), 5 column tiles
])
def test_amx_conv_two_threads(tmp_path, n, c, hw, f, k, s, p, d):
    """Threaded convs (row blocks across the threads), A in place or
    copied, each block written transposed into the NCHW result."""
    test_amx_conv(tmp_path, n, c, hw, f, k, s, p, d, threads=2)
