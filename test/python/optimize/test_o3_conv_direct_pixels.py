"""-O3 direct conv with the filters in the vector lanes (convs over 64+
channels, ``passes/optimize/conv_direct_pixels.py``) against onnxruntime:
stride 1 and 2, 3x3 and a dilated 5x5 window, 7x7 maps and rows narrower
than the pixel tile, rows cut into tiles with a shorter last one, padding on
every side (asymmetric), channels that are no multiple of 8 or 16, with and
without a bias, a fused ReLU / Clip / HardSwish; a static batch of 2, a
dynamic batch at two sizes, 1 and 2 threads; the image read in place (no
phase plane), pads wider than a tile."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from conv_cases import check_cases, conv_model

R = np.random.default_rng(5)

# tag, (C, H, W), filters, kernel, conv attributes, bias, activation
CASES = [
    ("r28", (64, 28, 28), 64, 3, dict(pads=[1, 1, 1, 1]), True, "relu"),       # tiles of 7
    ("s2", (64, 20, 30), 32, 3, dict(strides=[2, 2], pads=[1, 1, 1, 1]), True, None),
    ("map7", (128, 7, 7), 64, 3, dict(pads=[1, 1, 1, 1]), True, "clip"),       # one tile a row
    # 65 channels, 13 columns (a tile of 7 and one of 6), pads on every side, unequal
    ("asym", (65, 11, 13), 32, 3, dict(pads=[0, 2, 1, 1]), False, "relu"),
    ("k5_dil", (72, 12, 20), 32, 5, dict(dilations=[2, 2], pads=[4, 4, 4, 4]), True, None),
    ("narrow", (64, 9, 5), 32, 3, dict(pads=[1, 1, 1, 1]), True, None),        # 5 < the tile
    ("wide_s2", (80, 7, 101), 32, 3, dict(strides=[2, 2], pads=[1, 0, 1, 2]), True, "hardswish"),
    ("nopad", (96, 10, 18), 64, 3, dict(), False, None),                        # tiles of 8
    ("c16", (16, 12, 20), 32, 3, dict(pads=[1, 1, 1, 1]), True, "relu"),       # few channels
    ("c48_s2", (48, 14, 18), 64, 3, dict(strides=[2, 2], pads=[1, 0, 0, 1]), True, None),
    # pads wider than a tile: the first tile (7 of 26 columns) reads no column (bias only)
    ("widepad", (64, 6, 10), 32, 3, dict(pads=[1, 9, 0, 9]), True, "relu"),
    # stride 2: a first tile of 8 pixels in the pad (columns -17..-1), a dilated window
    ("s2_widepad", (64, 6, 11), 32, 3, dict(strides=[2, 2], pads=[1, 17, 1, 3]), True, "relu"),
    ("s2_dil", (40, 13, 23), 64, 3, dict(strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2]),
     False, None),
]


def _model(batch):
    return conv_model(CASES, batch, R, 0.1)


def _check(tmp_path, batch, sizes, threads=(1, 2)):
    check_cases(tmp_path, CASES, batch, sizes, R, 0.1, threads=threads, march="x86-64-v4")


def test_pixels_static(tmp_path):
    _check(tmp_path, 1, [1])


def test_pixels_static_batch(tmp_path):
    _check(tmp_path, 2, [2], threads=(1,))


def test_pixels_dynamic_batch(tmp_path):
    _check(tmp_path, "N", [1, 3])


def test_pixels_read_the_image(tmp_path):
    """The taps read the image itself at stride 1 and 2: no phase plane
    (its fill and its forall over the channels are gone), the output in an
    scf.forall over rows x filter panels (a 7-row map: even shares); the
    row's edge tiles are static (the pad's taps left out), the others a
    loop (inner_tiles)."""
    from onnx_mlir_py.passes.optimize.conv_direct import Direct, kernel_function
    from onnx_mlir_py.passes.optimize.conv_direct_pixels import inner_tiles
    from onnx_mlir_py.target import target_for
    t = target_for("x86-64-v4")
    dv = Direct((1, 64, 56, 56), (64, 64, 3, 3), (1, 64, 56, 56), (1, 1), (1, 1), "bias",
                (1, 1, 1, 1))
    text = kernel_function("k", dv, t, threads=True)
    assert "tensor<64x56x1x64xf32>" not in text    # the plane it had
    assert text.count("scf.forall (") == 1 and ") in (112)" in text   # 56 rows x 2 panels
    assert inner_tiles(dv, 8, 7) == (1, 6)           # tiles 0 and 6 static, 1..5 a loop
    s2 = Direct((1, 128, 56, 56), (128, 128, 3, 3), (1, 128, 28, 28), (2, 2), (1, 1), "bias",
                (1, 1, 1, 1))
    text = kernel_function("k", s2, t, threads=True)
    assert "tensor<128x56x2x32xf32>" not in text
    assert text.count("scf.forall (") == 1 and ") in (112)" in text   # 28 rows x 4 panels
    assert inner_tiles(s2, 7, 4) == (1, 4)           # columns -1..13, 13..27, 27..41, 41..55
    s2r = Direct((1, 64, 20, 30), (32, 64, 3, 3), (1, 32, 10, 15), (2, 2), (1, 1), "bias",
                 (1, 1, 1, 1))
    assert inner_tiles(s2r, 8, 1) == (1, 1)          # the one tile static (column -1)


def test_pixels_form_is_taken(tmp_path):
    """Every case becomes the direct kernel on AVX-512 (16 lanes: panels of
    32 filters), its zero pad and epilogue fused; not on AVX2 (16 registers),
    nor with 48 filters (no whole panel) or 15 channels."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.conv_direct import direct_convs
    from onnx_mlir_py.target import target_for
    model, _ = _model(1)
    path = onnx_mlir_py.compile(model, output=tmp_path / "m.mlir", emit="EmitMLIR")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        assert direct_convs(module, target_for("x86-64-v4")) == len(CASES)
        text = str(module)
        assert "linalg.conv_2d_nchw_fchw" not in text and "tensor.pad" not in text
        assert "linalg.generic" not in text
        assert "vector.transpose" in text
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        assert direct_convs(module, target_for("x86-64-v3")) == 0
    for c, f in ((64, 48), (15, 32)):
        g = h.make_graph([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, c, 12, 12])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)],
                         [nh.from_array(np.ones((f, c, 3, 3), np.float32), "w")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        path = onnx_mlir_py.compile(m, output=tmp_path / "n.mlir", emit="EmitMLIR")
        with make_context(), ir.Location.unknown():
            module = ir.Module.parse(open(path).read())
            assert direct_convs(module, target_for("x86-64-v4")) == 0


def test_pixel_tile():
    from onnx_mlir_py.passes.optimize.conv_direct_pixels import pixel_tile, row_tiles
    assert [pixel_tile(w) for w in (56, 28, 14, 7, 5, 13, 101, 18)] == [8, 7, 7, 7, 5, 7, 6, 6]
    assert row_tiles(13, 7) == (1, 6) and row_tiles(56, 8) == (7, 0)


def test_pixels_chain(tmp_path):
    """conv -> ReLU -> conv, both direct (ResNet-18's basic block): the second
    reads the first's call, its fused ReLU replaced by it (the rewrite
    matched both convs before rewriting either and crashed the compile on
    the erased ReLU)."""
    c = 64
    w1, w2 = ((R.standard_normal((c, c, 3, 3)) * 0.05).astype(np.float32) for _ in range(2))
    b1, b2 = (R.standard_normal(c).astype(np.float32) for _ in range(2))
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4),
             h.make_node("Relu", ["c2"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, c, 14, 14])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(w1, "w1"), nh.from_array(b1, "b1"),
                      nh.from_array(w2, "w2"), nh.from_array(b2, "b2")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    so = onnx_mlir_py.compile(model, output=tmp_path / "c.so", opt_level=3, march="x86-64-v4")
    x = R.standard_normal((1, c, 14, 14)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = ExecutionSession(so, num_threads=1).run([x])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_pixels_one_row_threads(tmp_path):
    """A 1-D conv (one output row, a 1x7 window: text CNNs) is threaded by
    its filter panels: it took neither forall when the split was by rows
    (2 threads ran it at the 1-thread time), and its results agree with
    onnxruntime at 1 and 2 threads, batch 1 and a dynamic batch of 3."""
    from onnx_mlir_py.passes.optimize.conv_direct import Direct, kernel_function
    from onnx_mlir_py.target import target_for
    dv = Direct((1, 64, 1, 70), (128, 64, 1, 7), (1, 128, 1, 64), (1, 1), (1, 1), "bias",
                (0, 0, 0, 0))
    text = kernel_function("k", dv, target_for("x86-64-v4"), threads=True)
    assert text.count("scf.forall (") == 1 and ") in (4)" in text   # 4 filter panels
    from conv_cases import compare_with_ort
    w = nh.from_array((R.standard_normal((128, 64, 1, 7)) * 0.1).astype(np.float32), "w")
    b = nh.from_array(R.standard_normal(128).astype(np.float32), "b")
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 7]),
                      h.make_node("Relu", ["c"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", 64, 1, 70])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w, b])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    compare_with_ort(tmp_path, model, ["y"], [1, 3], (1, 2), march="x86-64-v4",
                     feeds=lambda n: {"x": R.standard_normal((n, 64, 1, 70)).astype(np.float32)})


# weights above half of x86-64-v4's 1 MiB L2 on its 2 FMA pipes: the filter
# panels outermost (conv_direct_pixels.panels_outer): 2 panels x 7 rows, a
# stride 2 with unequal pads (4 panels x 7 rows), tiles of 7 + 6 in 4 rows
PANEL_CASES = [
    ("po_map7", (256, 7, 7), 64, 3, dict(pads=[1, 1, 1, 1]), True, "relu"),
    ("po_s2", (144, 13, 11), 128, 3, dict(strides=[2, 2], pads=[1, 0, 1, 2]), True, None),
    ("po_asym", (160, 5, 13), 96, 3, dict(pads=[0, 2, 1, 1]), False, "clip"),
]


def test_panels_outer_loop_order():
    """On two FMA pipes with more weights than half of L2, the image's loop
    runs filter panels outside the rows (one loop or forall of panels x rows,
    panel = i / OH); with fewer weights, or on Zen 4's one pipe, the rows
    stay outermost."""
    from onnx_mlir_py.passes.optimize.conv_direct import Direct, kernel_function
    from onnx_mlir_py.passes.optimize.conv_direct_pixels import panels_outer
    from onnx_mlir_py.target import target_for
    v4, zen4, spr = (target_for(c) for c in ("x86-64-v4", "znver4", "sapphirerapids"))
    big = Direct((1, 512, 7, 7), (512, 512, 3, 3), (1, 512, 7, 7), (1, 1), (1, 1), "bias",
                 (1, 1, 1, 1))
    small = Direct((1, 128, 28, 28), (128, 128, 3, 3), (1, 128, 28, 28), (1, 1), (1, 1), "bias",
                   (1, 1, 1, 1))
    assert panels_outer(big, v4) and panels_outer(big, spr) and not panels_outer(big, zen4)
    # 590 KB: above half of x86-64-v4's 1 MiB L2, below half of Sapphire Rapids' 2 MiB
    assert panels_outer(small, v4) and not panels_outer(small, spr)
    for threads, head in ((False, "to %k112 step %k1"), (True, ") in (112)")):
        text = kernel_function("k", big, spr, threads=threads)   # 16 panels x 7 rows
        assert text.count(head) == 1 and "arith.divui %iv" in text and "%k7 : index" in text
        assert "[1, 32, 1, 7]" in text and "[1, 512, 1, 7]" not in text
        zen = kernel_function("k", big, zen4, threads=threads)
        if threads:             # rows x panels, the row i / 16
            assert zen.count(") in (112)") == 1 and "%k16 : index" in zen
        else:                   # rows, each over every panel
            assert "to %k7 step %k1" in zen and "[1, 512, 1, 7]" in zen
            assert "arith.divui" not in zen and "to %k112" not in zen


def test_panels_outer_static(tmp_path):
    check_cases(tmp_path, PANEL_CASES, 1, [1], R, 0.05, threads=(1, 2), march="x86-64-v4")


def test_panels_outer_dynamic_batch(tmp_path):
    check_cases(tmp_path, PANEL_CASES, "N", [1, 3], R, 0.05, threads=(1, 2), march="x86-64-v4")


def test_panels_outer_in_the_plan():
    """The kernel plan's reason names the panels-outer order (Sapphire
    Rapids: 1.2 MB of weights above half of its 2 MiB L2), not on Zen 4."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.kernel_plan import plan_kernels
    from onnx_mlir_py.target import target_for
    text = """
func.func @f(%x: tensor<1x256x6x8xf32>) -> tensor<1x128x4x6xf32> {
  %w = arith.constant dense<5.000000e-01> : tensor<128x256x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x128x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128x4x6xf32>) -> tensor<1x128x4x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x256x6x8xf32>, tensor<128x256x3x3xf32>) outs(%z : tensor<1x128x4x6xf32>) -> tensor<1x128x4x6xf32>
  return %c : tensor<1x128x4x6xf32>
}"""
    for cpu, outer in (("sapphirerapids", True), ("znver4", False)):
        with make_context(), ir.Location.unknown():
            plan = plan_kernels(ir.Module.parse(text), target_for(cpu), threads=False)
            (entry,) = plan.entries
            assert entry.kernel == "conv_direct" and "filters in the lanes" in entry.reason
            assert ("filter panels outside the rows" in entry.reason) == outer, entry.reason
