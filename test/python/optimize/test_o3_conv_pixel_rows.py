"""Convs whose pixels are the rows of the product (passes/optimize/conv_pixel_rows.py).

A conv whose pixel count is not a multiple of the kernel's column panel
computes ``outᵀ = colᵀ @ Wᵀ``: the kernel reads the im2col matrix (or a 1x1
conv's input) in place as a transposed A, with a register tile of 6..8 rows
chosen to divide the pixels, and the [M, F] result is transposed into NCHW
in 16x16 blocks. The numbers must match onnx.reference / onnxruntime for
row tiles that divide M and that do not (the kernel pads A), filters not a
multiple of the column panel, K padded, strides, dilations, asymmetric pads,
transposes with and without a partial last block, at 1 and 2 threads and
with a dynamic batch (the one-image kernel writing into the batch's output).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.passes.optimize.conv_pixel_rows import pixel_rows
from onnx_mlir_py.passes.optimize.matmul import row_tile
from test_o3_im2col_packed import _model       # convs with biases, every other one + Relu
from test_o3_numerics import N, Cases, compile_with_ort, rand


def test_row_tile():
    """The tile height of 6..8 that pads the pixels least (the larger on a tie)."""
    assert row_tile(49, 8) == 7          # 7x7 maps: 49 rows, not 56
    assert row_tile(196, 8) == 7         # 14x14
    assert row_tile(784, 8) == 8 and row_tile(3136, 8) == 8
    assert row_tile(100, 8) == 6         # 102 rows (7: 105, 8: 104)
    assert row_tile(45, 8) == 8          # 48 either way: the larger
    assert row_tile(25, 6) == 5          # AVX2's 6-row tile: 4..6
    assert row_tile(3, 8) == 6


def test_pixel_rows_choice():
    """Used for one image of a plain conv with its bias, 32+ filters in whole
    vectors, when the pixel panels pad the work; else the im2col form."""
    assert pixel_rows(1, 1, True, 512, 49, 32, 8) == 7
    assert pixel_rows(1, 1, True, 256, 196, 32, 8) == 7
    assert pixel_rows(1, 1, True, 128, 784, 32, 8) == 8     # 784 = 24.5 panels
    assert pixel_rows(1, 1, True, 64, 3136, 32, 8) == 0     # whole panels
    assert pixel_rows(1, 1, False, 512, 49, 32, 8) == 0     # no bias: its own init
    assert pixel_rows(2, 1, True, 512, 49, 32, 8) == 0      # a static batch (batch_matmul)
    assert pixel_rows(1, 2, True, 512, 49, 32, 8) == 0      # grouped
    assert pixel_rows(1, 1, True, 16, 49, 32, 8) == 0       # fewer filters than a panel
    assert pixel_rows(1, 1, True, 40, 49, 32, 8) == 0       # not whole vectors of filters
    assert pixel_rows(1, 1, True, 48, 49, 32, 8) == 0       # 64 / 48 pads more than 64 / 49
    assert pixel_rows(1, 1, True, 80, 49, 32, 8) == 7       # 96 / 80 less
    assert pixel_rows(1, 1, True, 512, 49, 32, 0) == 0      # no row block: off
    assert pixel_rows(1, 1, True, 64, 49, 16, 6) == 5       # AVX2: 7x7 in 5-row tiles


# (x shape, w shape, attrs): 49 pixels in 7-row tiles (K = 576); stride 2 to
# 7x7 with 80 filters (packed B padded to 96 columns); a 1x1 conv over 45
# pixels (its input read in place, padded by the kernel to 48 rows; K = 40,
# 5 k blocks); a strided 1x1 conv (im2col, K = 20 padded to 24); dilation 2
# over 81 pixels; asymmetric pads over 289 pixels (transpose tail of 1, K =
# 27 padded to 32); a 14x14 map (196 = 28 tiles of 7, tail of 4)
CONVS = [
    ((1, 64, 7, 7), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 32, 14, 14), (80, 32, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 40, 5, 9), (32, 40, 1, 1), dict()),
    ((1, 20, 10, 10), (64, 20, 1, 1), dict(strides=[2, 2])),
    ((1, 16, 9, 9), (32, 16, 3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
    ((1, 3, 17, 17), (32, 3, 3, 3), dict(pads=[0, 1, 2, 1])),
    ((1, 24, 14, 14), (64, 24, 3, 3), dict(pads=[1, 1, 1, 1])),
]


@pytest.mark.parametrize("march", [None, "x86-64-v3", "x86-64-v2"])
def test_pixel_rows_numerics(tmp_path, march):
    """The host's target (AVX-512 here: 7..8-row tiles of 32 filters, 16x16
    transposes), the portable AVX2 one (6-row tiles of 16, 8x8 blocks) and
    SSE (4-lane vectors: 4x4 blocks)."""
    from onnx_mlir_py.isa import is_x86_host
    if march is not None and not is_x86_host():
        pytest.skip("an x86 ISA level")
    c = _model(CONVS)
    m = c.model()
    sess = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3,
                                                 march=march))
    got = sess.run([c.feeds[f"x{i}"] for i in range(len(CONVS))])
    want = ReferenceEvaluator(m).run(None, c.feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_pixel_rows_threads_and_dynamic_batch(tmp_path):
    """Kernels big enough for the pool, at 1 and 2 threads: 256 -> 256 over
    14x14 (28 row blocks of 7: the threads split column groups, K in slabs)
    and 128 -> 256 over 28x28 (98 row blocks of 8, packed Wᵀ of 1.2 MB:
    groups of row blocks under K slabs, matmul.cache_blocks); a dynamic
    batch runs the one-image kernel per image, writing its transposed
    result into the batch's output; against onnxruntime."""
    c = Cases()
    c.input("x", [1, 256, 14, 14])
    c.weight("w", rand(256, 256, 3, 3) * 0.05)
    c.weight("b", rand(256))
    c.input("xd", ["N", 32, 7, 7])
    c.weight("wd", rand(64, 32, 3, 3) * 0.2)
    c.weight("bd", rand(64))
    c.input("x2", [1, 128, 28, 28])
    c.weight("w2", rand(256, 128, 3, 3) * 0.05)
    c.weight("b2", rand(256))
    c.nodes += [N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
                N("Conv", ["x2", "w2", "b2"], ["y2"], pads=[1, 1, 1, 1]),
                N("Conv", ["xd", "wd", "bd"], ["yd_c"], pads=[1, 1, 1, 1]),
                N("Relu", ["yd_c"], ["yd"])]
    c.outputs += ["y", "y2", "yd"]
    so, ort = compile_with_ort(tmp_path, c.model())
    sess = ExecutionSession(so)
    assert sess.multithreaded
    x, x2 = rand(1, 256, 14, 14), rand(1, 128, 28, 28)
    for n in (1, 2):
        sess.set_num_threads(n)
        for batch in (3, 1, 2):
            xd = rand(batch, 32, 7, 7)
            got = sess.run([x, xd, x2])      # the inputs in signature order
            want = ort.run(None, {"x": x, "x2": x2, "xd": xd})
            for g, w in zip(got, want):
                assert g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("xs, ws, attrs, rows", [
    (CONVS[0][0], CONVS[0][1], CONVS[0][2], 7),
    (CONVS[2][0], CONVS[2][1], CONVS[2][2], 8),
    ((1, 64, 56, 56), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1]), None),
])
def test_pixel_row_form_is_taken(tmp_path, xs, ws, attrs, rows):
    """On the AVX-512 target the 7x7 conv becomes a matmul reading the im2col
    transposed, packed into a kernel of 7-row tiles; a 56x56 map (whole
    column panels) keeps the im2col form."""
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import convs_to_matmul, pack_matmuls
    from onnx_mlir_py.passes.optimize.matmul import packed_contractions
    from onnx_mlir_py.target import target_for
    c = _model([(xs, ws, attrs)])
    path = onnx_mlir_py.compile(c.model(), output=tmp_path / "m.mlir", emit="EmitMLIR")
    target = target_for("x86-64-v4")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        mb, nb, kb = target.matmul_tile
        assert convs_to_matmul(module, False, (kb, nb), row_block=mb) == 1
        transposed_a = "affine_map<(d0, d1, d2) -> (d2, d0)>" in str(module)
        assert transposed_a == (rows is not None)
        pack_matmuls(module, target)
        assert "linalg.matmul" not in str(module)
        (op,) = packed_contractions(module)
        a4 = ir.RankedTensorType(op.operands[0].type).shape
        if rows is not None:
            assert a4[1:] == [kb, a4[2], rows]      # [K/kb, kb, M/rows, rows]
            # the bias is no [M, F] tensor written and read back: the
            # accumulators start from a zero broadcast fused into the
            # register tile and a one-add epilogue adds the [F] bias
            from onnx_mlir_py.passes.optimize.matmul import _epilogue_consumer, _tile_init
            assert _tile_init(op) and _epilogue_consumer(op)
            init = op.operands[2].owner
            assert len(init.operands) == 2 and isinstance(init.operands[0].type, ir.F32Type)


def test_pixel_rows_one_by_one_bias(tmp_path):
    """MobileNetV2's expansions (few input channels, many filters, 1x1) in
    pixel-row form: the [F] bias added by the kernel's one-add epilogue
    (accumulators from zero in registers, matmul_text ``cols_after``),
    with a ReLU6 (Clip) or a residual Add after the transpose, none, and a
    dynamic batch; at 1 and 2 threads, against onnxruntime."""
    c = Cases()
    specs = [("a", [1, 32, 28, 28], 192), ("b", [1, 64, 14, 14], 384),
             ("c", [1, 160, 7, 7], 960), ("d", ["N", 96, 14, 14], 576)]
    for s, xs, f in specs:
        c.input(f"x{s}", xs)
        c.weight(f"w{s}", rand(f, xs[1], 1, 1) * 0.2)
        c.weight(f"b{s}", rand(f))
        c.nodes.append(N("Conv", [f"x{s}", f"w{s}", f"b{s}"], [f"c{s}"]))
    c.weight("lo", np.array(0.0, np.float32))
    c.weight("hi", np.array(6.0, np.float32))
    c.input("r", [1, 384, 14, 14])
    c.nodes += [N("Clip", ["ca", "lo", "hi"], ["ya"]), N("Add", ["cb", "r"], ["yb"]),
                N("Identity", ["cc"], ["yc"]), N("Clip", ["cd", "lo", "hi"], ["yd"])]
    c.outputs += ["ya", "yb", "yc", "yd"]
    so, ort = compile_with_ort(tmp_path, c.model())
    sess = ExecutionSession(so)
    feeds = {"xa": rand(1, 32, 28, 28), "xb": rand(1, 64, 14, 14), "xc": rand(1, 160, 7, 7),
             "r": rand(1, 384, 14, 14)}
    for n in (1, 2):
        sess.set_num_threads(n)
        for batch in (1, 2):
            feeds["xd"] = rand(batch, 96, 14, 14)
            got = sess.run([feeds[i.name] for i in c.inputs])
            want = ort.run(None, feeds)
            for g, w in zip(got, want):
                assert g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("f, m, par, forall", [(192, 784, True, True), (192, 784, False, False),
                                                (32, 49, True, True), (16, 784, True, False)])
def test_transpose_blocks_forall(f, m, par, forall):
    """The transpose into NCHW splits its filter blocks across the pool
    (an ``scf.forall``, each block writing its own rows) when asked to and
    there are two blocks or more, else it stays an ``scf.for``; the text
    parses. Its numbers at 1 and 2 threads: the tests above (with and
    without a partial last block, with epilogues)."""
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.conv_pixel_rows import transpose_blocks
    from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, tensor
    e = Emitter()
    src, dest = e.param("src", tensor([m + 3, f])), e.param("dst", tensor([f, m]))
    r = transpose_blocks(e, src, dest, m, 16, None, par)
    e(f"return {r} : {r.type}")
    text = e.function("t", [src, dest], r.type)
    assert ("scf.forall" in text) == forall
    with make_context():
        ir.Module.parse("module {\n" + text + "\n}")


@pytest.mark.parametrize("xs, f, loops", [((1, 32, 28, 28), 192, 2), ((1, 960, 7, 7), 32, 1)])
def test_transpose_threads_threshold(tmp_path, xs, f, loops):
    """In a threaded -O3 build only a transpose of TRANSPOSE_THREAD_MIN
    elements or more is a parallel loop of its own: MobileNetV2's 32 -> 192
    1x1 conv over 28x28 (150K elements) has two (the product's, the
    transpose's), a 960 -> 32 one over 7x7 (1.6K) only the product's."""
    from onnx_mlir_py.passes.optimize.conv_pixel_rows import TRANSPOSE_THREAD_MIN
    assert (f * xs[2] * xs[3] >= TRANSPOSE_THREAD_MIN) == (loops == 2)
    c = Cases()
    c.input("x", list(xs))
    c.weight("w", rand(f, xs[1], 1, 1))
    c.weight("b", rand(f))
    c.nodes.append(N("Conv", ["x", "w", "b"], ["y"]))
    c.outputs.append("y")
    path = onnx_mlir_py.compile(c.model(), output=tmp_path / "m.ll", opt_level=3, emit="EmitLLVMIR")
    assert open(path).read().count("call void @om_parallel_for(") == loops
