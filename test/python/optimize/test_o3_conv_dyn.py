"""-O3 convs with dynamic spatial dims (passes/optimize/conv_dyn.py): im2col
with vector row copies (whole chunks + one masked remainder, strided reads
kept by shuffles) + the packed contraction over a run-time number of
column blocks + the copy out. Compiled once, run at several batch/H/W
(output widths of 1, one chunk -1/+1, several chunks; a 1x1 image),
compared with onnxruntime at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import N, Cases, compile_with_ort, rand

pytest.importorskip("onnxruntime")

# (C, F, kernel, stride, pad, dilation, bias, relu after)
CONVS = [(3, 8, 7, 2, 3, 1, True, False), (4, 13, 3, 1, 1, 1, False, True),
         (5, 7, 3, 2, 1, 1, True, False), (2, 6, 1, 2, 0, 1, True, False),
         (3, 5, 3, 1, 0, 2, False, False), (1, 3, 2, 3, 1, 1, True, True)]
# (batch, H, W): W gives output widths 1, 15, 16, 17, 33 and more at stride 1
SHAPES = [(1, 1, 1), (2, 7, 15), (1, 9, 16), (3, 16, 17), (1, 12, 33), (2, 5, 40)]


def _model():
    c = Cases()
    for i, (ci, f, k, s, p, d, bias, relu) in enumerate(CONVS):
        c.input(f"x{i}", ["N", ci, f"H{i}", f"W{i}"])
        c.weight(f"w{i}", rand(f, ci, k, k))
        c.weight(f"b{i}", rand(f))
        c.conv(i, bias, relu, kernel_shape=[k, k], strides=[s, s], pads=[p] * 4,
               dilations=[d, d])
    m = c.model()
    m.ir_version = 10
    return m


def _feeds(n, hh, ww):
    """An image at least as large as the (dilated) kernel minus the pads."""
    out = {}
    for i, (ci, _f, k, _s, p, d, *_rest) in enumerate(CONVS):
        least = max(1, (k - 1) * d + 1 - 2 * p)
        out[f"x{i}"] = rand(n, ci, max(hh, least), max(ww, least))
    return out


def test_convs_dynamic_batch_and_spatial_dims(tmp_path):
    m = _model()
    so, ref = compile_with_ort(tmp_path, m)
    for t in (1, 2):
        sess = ExecutionSession(so, num_threads=t)
        for shape in SHAPES:
            feeds = _feeds(*shape)
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip([o.name for o in m.graph.output], got, want):
                assert g.shape == w.shape, (name, shape)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} at {shape}, {t} threads")


def test_dynamic_spatial_conv_uses_the_packed_kernel(tmp_path):
    """No naive conv loop is left: each conv became im2col + a packed
    contraction, and the kernel schedule (register tiles) applied to each."""
    import mlir.ir as ir
    from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
    from onnx_mlir_py.passes.optimize.matmul import packed_contractions, \
        tile_packed_contractions
    from onnx_mlir_py.target import target_for
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_model(), output=path, opt_level=3, emit="EmitMLIR")
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        assert dynamic_convs_to_matmul(module, target_for("x86-64-v3")) == len(CONVS)
        assert "linalg.conv_2d_nchw_fchw" not in str(module)
        assert len(packed_contractions(module)) == len(CONVS)
        assert tile_packed_contractions(module) == len(CONVS)


def test_dynamic_spatial_conv_fuses_bias_and_relu(tmp_path):
    """With the result dims read off the inits (``optimize.resolve_dims``),
    each conv's bias add and ReLU are fused into its kernel (the ReLU applied
    in the copy out on vectors): no scalar ReLU generic is left. Without it, the
    allocation checks' dim reads were second users and the ReLUs stayed
    separate passes through memory."""
    import mlir.ir as ir
    from onnx_mlir_py.passes.optimize import resolve_dims
    from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
    from onnx_mlir_py.target import target_for
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_model(), output=path, opt_level=3, emit="EmitMLIR")
    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        assert resolve_dims(module) > 0
        assert dynamic_convs_to_matmul(module, target_for("x86-64-v4")) == len(CONVS)
        lines = str(module).splitlines()
        relus = sum(1 for cv in CONVS if cv[-1])
        assert not [ln for ln in lines if "arith.maximumf" in ln and ": f32" in ln]
        # two copies of the epilogue per conv: the whole chunks and the masked one
        assert sum("arith.maximumf" in ln and "vector<" in ln for ln in lines) == 2 * relus


def test_dynamic_spatial_conv_clip_epilogue(tmp_path):
    """A Clip whose bounds are captured scalars (initializers read outside
    the elementwise body) fused into the dynamic-H/W conv's copy out, with
    and without a bias, a 7x7/2 stem among them: the captured splats once
    shadowed the im2col's K in the kernel text (K = 0: a parse error, an
    internal error on ResNet-18 with dynamic H/W)."""
    c = Cases()
    c.weight("lo", np.array(-0.5, np.float32))
    c.weight("hi", np.array(0.75, np.float32))
    for i, (ci, f, k, s, p, bias) in enumerate([(3, 16, 7, 2, 3, True), (4, 8, 3, 1, 1, False)]):
        c.input(f"x{i}", [1, ci, f"H{i}", f"W{i}"])
        c.weight(f"w{i}", rand(f, ci, k, k))
        if bias:
            c.weight(f"b{i}", rand(f))
        c.nodes.append(N("Conv", [f"x{i}", f"w{i}"] + ([f"b{i}"] if bias else []), [f"c{i}"],
                         kernel_shape=[k, k], strides=[s, s], pads=[p] * 4))
        c.nodes.append(N("Clip", [f"c{i}", "lo", "hi"], [f"y{i}"]))
        c.outputs.append(f"y{i}")
    m = c.model()
    m.ir_version = 10
    so, ref = compile_with_ort(tmp_path, m)
    for t in (1, 2):
        sess = ExecutionSession(so, num_threads=t)
        for hh, ww in ((9, 16), (30, 41)):
            feeds = {"x0": rand(1, 3, hh, ww), "x1": rand(1, 4, hh, ww)}
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip(c.outputs, got, want):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} at {hh}x{ww}, {t} threads")


def _se_model():
    """Squeeze-excitation scales (x * sigmoid(GlobalAveragePool(x)), a
    [N, C, 1, 1] gate) read by dynamic-H/W convs: 0: a 1x1 conv with a bias
    (EfficientNet's project conv); 1: Mul(gate, x) (the other order) into a
    3x3 stride-2 conv, no bias, then SiLU; 2: not fused, the scaled tensor is
    also an output; 3: not fused, a padded 3x3 conv (the pad sits between)."""
    c = Cases()
    for i, (ci, f, k, s, p, bias) in enumerate([(16, 24, 1, 1, 0, True), (8, 16, 3, 2, 0, False),
                                                (8, 8, 1, 1, 0, True), (8, 8, 3, 1, 1, True)]):
        c.input(f"x{i}", ["N", ci, "H", "W"])
        c.weight(f"w{i}", rand(f, ci, k, k))
        if bias:
            c.weight(f"b{i}", rand(f))
        c.nodes += [N("GlobalAveragePool", [f"x{i}"], [f"p{i}"]),
                    N("Sigmoid", [f"p{i}"], [f"g{i}"]),
                    N("Mul", [f"g{i}", f"x{i}"] if i == 1 else [f"x{i}", f"g{i}"], [f"s{i}"]),
                    N("Conv", [f"s{i}", f"w{i}"] + ([f"b{i}"] if bias else []),
                      [f"c{i}" if i == 1 else f"y{i}"], kernel_shape=[k, k], strides=[s, s],
                      pads=[p] * 4)]
        c.outputs.append(f"y{i}")
    c.nodes += [N("Sigmoid", ["c1"], ["c1_s"]), N("Mul", ["c1", "c1_s"], ["y1"])]
    c.outputs.append("s2")
    m = c.model()
    m.ir_version = 10
    return m


def test_dynamic_conv_folds_the_channel_scale(tmp_path):
    """The squeeze-excitation Mul before a dynamic-H/W conv is applied in its
    im2col copy (``conv_dyn.channel_scale``): compared with onnxruntime at two
    shapes (odd sizes, a batch of 2: a scale per image), 1 and 2 threads."""
    from test_o3_dyn_silu import check_shapes
    m = _se_model()
    so, ref = compile_with_ort(tmp_path, m)
    check_shapes(m, so, ref, np.random.default_rng(36))


def test_dynamic_conv_channel_scale_is_fused(tmp_path):
    """Cases 0 and 1 lose their Mul (the gate broadcast over the map); 2 (a
    second user) and 3 (a pad between) keep theirs."""
    import mlir.ir as ir
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.optimize import resolve_dims
    from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
    from onnx_mlir_py.target import target_for
    path = tmp_path / "m.mlir"
    onnx_mlir_py.compile(_se_model(), output=path, opt_level=3, emit="EmitMLIR")

    def gate_muls(module):
        return sum(1 for op in walk_ops(module.operation) if op.name == "linalg.generic"
                   and "(d0, d1, 0, 0)" in str(op.attributes["indexing_maps"]))
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        resolve_dims(module)
        assert gate_muls(module) == 4
        assert dynamic_convs_to_matmul(module, target_for("x86-64-v4")) == 4
        assert gate_muls(module) == 2


def _strips_model():
    """1x1 stride-1 convs over dynamic N, H, W (conv_dyn's strips when the
    map is wider than one strip): 0: 16 -> 96 with a bias and SiLU
    (EfficientNet's expand conv); 1: 13 -> 21 with a bias reading a
    squeeze-excitation gate (rows and filters not whole blocks); 2: 5 -> 7,
    no bias, the gate and SiLU."""
    c = Cases()
    for i, (ci, f, bias, gate, silu) in enumerate([(16, 96, True, False, True),
                                                   (13, 21, True, True, False),
                                                   (5, 7, False, True, True)]):
        c.input(f"x{i}", ["N", ci, "H", "W"])
        c.weight(f"w{i}", rand(f, ci, 1, 1))
        if bias:
            c.weight(f"b{i}", rand(f))
        x = f"x{i}"
        if gate:
            c.input(f"g{i}", ["N", ci, 1, 1])
            c.nodes.append(N("Mul", [x, f"g{i}"], [f"s{i}"]))
            x = f"s{i}"
        y = f"c{i}" if silu else f"y{i}"
        c.nodes.append(N("Conv", [x, f"w{i}"] + ([f"b{i}"] if bias else []), [y],
                         kernel_shape=[1, 1]))
        if silu:
            c.nodes += [N("Sigmoid", [y], [f"q{i}"]), N("Mul", [y, f"q{i}"], [f"y{i}"])]
        c.outputs.append(f"y{i}")
    m = c.model()
    m.ir_version = 10
    return m


def test_dynamic_1x1_conv_strips(tmp_path):
    """The strips of a dynamic 1x1 conv (conv_dyn._strips) against
    onnxruntime, 1 and 2 threads. With 32-column blocks and strips of at
    most 8 blocks, at least min(4, blocks): 9x17 (5 blocks: 2 + 2 + 1, the
    last one partial), 16x16 (4 strips of 2 whole blocks), 1x257 (9 blocks:
    3 + 3 + 3, a last block of one column), 30x41 and 23x29 (many strips,
    a batch of 2 and 3: a gate per image) and 112x112."""
    m = _strips_model()
    so, ref = compile_with_ort(tmp_path, m)
    rng = np.random.default_rng(37)
    for t in (1, 2):
        sess = ExecutionSession(so, num_threads=t)
        for n, hh, ww in ((1, 9, 17), (1, 16, 16), (1, 1, 257), (2, 30, 41), (3, 23, 29),
                          (1, 112, 112)):
            feeds = {s.name: rng.standard_normal(
                (n, s.shape[1]) + ((1, 1) if s.name.startswith("g") else (hh, ww)))
                .astype(np.float32) for s in sess.input_specs}
            got = sess.run([feeds[s.name] for s in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip([o.name for o in m.graph.output], got, want):
                assert g.shape == w.shape, (name, n, hh, ww)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} at {n}x{hh}x{ww}, {t} threads")


def test_dynamic_1x1_strip_width():
    """kernel_plan's strip width: whole column blocks, the strip's rows and
    accumulators within a quarter of L2, at most 8 blocks; 0 (no strips)
    for a conv that is not 1x1 stride 1."""
    import mlir.ir as ir
    from onnx_mlir_py.passes.optimize.kernel_plan import dyn_strip_columns
    from onnx_mlir_py.target import target_for
    t = target_for("emeraldrapids")
    mb, nb, kb = t.matmul_tile

    def conv(c, f, k, s):
        with ir.Context(), ir.Location.unknown():
            text = f"""func.func @f(%x: tensor<?x{c}x?x?xf32>, %w: tensor<{f}x{c}x{k}x{k}xf32>,
                    %e: tensor<?x{f}x?x?xf32>) -> tensor<?x{f}x?x?xf32> {{
              %z0 = arith.constant 0.0 : f32
              %z = linalg.fill ins(%z0 : f32) outs(%e : tensor<?x{f}x?x?xf32>) -> tensor<?x{f}x?x?xf32>
              %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>,
                     strides = dense<{s}> : tensor<2xi64>}}
                   ins(%x, %w : tensor<?x{c}x?x?xf32>, tensor<{f}x{c}x{k}x{k}xf32>)
                   outs(%z : tensor<?x{f}x?x?xf32>) -> tensor<?x{f}x?x?xf32>
              return %c : tensor<?x{f}x?x?xf32>
            }}"""
            mod = ir.Module.parse(text)
            op = [o for o in mod.body.operations[0].regions[0].blocks[0].operations
                  if o.operation.name == "linalg.conv_2d_nchw_fchw"][0].operation
            return dyn_strip_columns(op, t)
    assert conv(16, 96, 1, 1) == 8 * nb
    s = conv(1152, 320, 1, 1)
    assert s % nb == 0 and 4 * s * (1152 + 320) <= t.l2 // 4 and s < 8 * nb
    assert conv(16, 96, 3, 1) == 0 and conv(16, 96, 1, 2) == 0
