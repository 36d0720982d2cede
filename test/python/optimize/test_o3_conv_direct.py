"""-O3 direct kernel of convs over few input channels (network stems,
``passes/optimize/conv_direct.py``) against onnxruntime: strides 1 and 2,
3x3 to 7x7 windows, dilation, asymmetric pads, rows that end in a partial
vector, taps whose phase and offset come from a dilated column, with and without a bias, with
a fused ReLU / HardSwish / Clip epilogue; a static batch of 2, a dynamic
batch at two sizes, 1 and 2 threads, and the AVX2 / SSE targets (4x2 tiles,
8- and 4-lane vectors)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from conv_cases import check_cases, conv_model

R = np.random.default_rng(11)

# tag, (C, H, W), filters, kernel, conv attributes, bias, activation
CASES = [
    ("mnv3", (3, 37, 45), 16, 3, dict(strides=[2, 2], pads=[1, 1, 1, 1]), True, "hardswish"),
    ("resnet", (3, 40, 52), 64, 7, dict(strides=[2, 2], pads=[3, 3, 3, 3]), True, "relu"),
    ("s1_nobias", (1, 20, 33), 8, 5, dict(pads=[2, 2, 2, 2]), False, None),
    ("dilated", (4, 30, 30), 24, 3, dict(dilations=[2, 2], pads=[2, 2, 2, 2]), True, "clip"),
    ("yolo_asym", (3, 40, 41), 32, 6, dict(strides=[2, 2], pads=[2, 2, 1, 1]), True, None),
    ("nopad_s2", (2, 35, 70), 16, 3, dict(strides=[2, 2]), True, "relu"),
    ("wide_s1", (3, 12, 100), 16, 3, dict(pads=[1, 1, 1, 1]), False, "relu"),
    # the phase buffer: a tap's phase and offset from j*d (stride 2, dilation 2), no right
    # pad with image columns left over; pads of 4 on both sides of a 5x5/2 window
    ("dilated_s2", (3, 33, 75), 8, 3, dict(strides=[2, 2], dilations=[2, 2], pads=[1, 3, 2, 0]),
     True, None),
    ("wide_pad_s2", (2, 20, 37), 16, 5, dict(strides=[2, 2], pads=[3, 4, 3, 4]), False, "relu"),
    # windows over up to 32 channels on rows of 80+ columns (YOLO's first 3x3 convs)
    ("c16_s2", (16, 9, 166), 32, 3, dict(strides=[2, 2], pads=[1, 1, 1, 1]), True, "relu"),
    ("c32_s1", (32, 5, 85), 16, 3, dict(pads=[1, 1, 1, 1]), True, None),
    # 63 columns, stride 2, no pad: the second chunk of phase 0 (columns
    # 32..63) would read one column past the row, so it is a static chunk
    ("edge_s2", (2, 9, 63), 16, 3, dict(strides=[2, 2]), True, None),
]


def _model(batch):
    return conv_model(CASES, batch, R, 0.3)


def _check(tmp_path, batch, sizes, threads=(1, 2), march=None):
    check_cases(tmp_path, CASES, batch, sizes, R, 0.3, x_scale=2.0, threads=threads, march=march)


def test_direct_static(tmp_path):
    _check(tmp_path, 1, [1])


def test_direct_static_batch(tmp_path):
    _check(tmp_path, 2, [2])


def test_direct_dynamic_batch(tmp_path):
    _check(tmp_path, "N", [1, 3])


@pytest.mark.parametrize("march", ["x86-64-v3", "x86-64-v2"])
def test_direct_other_targets(tmp_path, march):
    from onnx_mlir_py.isa import is_x86_host
    if not is_x86_host():
        pytest.skip("an x86 ISA level")
    _check(tmp_path, 1, [1], threads=(1,), march=march)


def test_direct_form_is_taken(tmp_path):
    """Every case becomes the direct kernel on AVX-512 and AVX2 (filters in
    whole blocks of 8 / 4), its zero pad and epilogue fused; a 1x1 conv over 5
    channels, a 3x3 conv over 33 channels or with rows of 38 columns, or 12
    filters (not whole blocks of 8) do not."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.conv_direct import direct_convs
    from onnx_mlir_py.target import target_for
    model, _ = _model(1)
    path = onnx_mlir_py.compile(model, output=tmp_path / "m.mlir", emit="EmitMLIR")
    for march in ("x86-64-v4", "x86-64-v3"):
        with make_context(), ir.Location.unknown():
            module = ir.Module.parse(open(path).read())
            assert direct_convs(module, target_for(march)) == len(CASES)
            text = str(module)
            assert "linalg.conv_2d_nchw_fchw" not in text
            assert "linalg.generic" not in text        # bias adds and activations fused
            assert "tensor.pad" not in text            # the zero pads read through
    for c, f, k, w in ((5, 16, 1, 100), (33, 16, 3, 100), (16, 16, 3, 40), (3, 12, 3, 40)):
        g = h.make_graph([h.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[k, k])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, c, 20, w])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)],
                         [nh.from_array(np.ones((f, c, k, k), np.float32), "w")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        path = onnx_mlir_py.compile(m, output=tmp_path / "n.mlir", emit="EmitMLIR")
        with make_context(), ir.Location.unknown():
            module = ir.Module.parse(open(path).read())
            assert direct_convs(module, target_for("x86-64-v4")) == 0


def test_stride2_fill_reads_whole_vectors():
    """A stride-2 phase fill's loop chunks read 2 whole vectors (32 columns
    at 16 lanes) and keep every other lane: not 31 columns, an odd read that
    LLVM splits into 16+8+4+2+1-lane loads (conv_direct.loop_span)."""
    from onnx_mlir_py.passes.optimize.conv_direct import Direct, kernel_function
    from onnx_mlir_py.target import target_for
    dv = Direct((1, 16, 9, 166), (32, 16, 3, 3), (1, 32, 5, 83), (2, 2), (1, 1), "bias",
                (1, 1, 1, 1))
    text = kernel_function("k", dv, target_for("x86-64-v4"), threads=False)
    assert "tensor<1x16x9x166xf32>, vector<32xf32>" in text
    assert "vector<31xf32>" not in text


def test_rows_plane_when_rows_are_reused():
    """The rows tile fills one phase plane per image ([C, H, s, M]: each
    input row once) when each input row is read by 2+ output rows (KH*d/s:
    a 6x6/2 stem, a 3x3/1 conv), and its per-row buffer of KH rows at 1.5
    (a 3x3/2 conv: conv_direct.row_reuse)."""
    from onnx_mlir_py.passes.optimize.conv_direct import Direct, kernel_function, phase_width
    from onnx_mlir_py.target import target_for
    t = target_for("x86-64-v4")
    stem = Direct((1, 3, 40, 41), (32, 3, 6, 6), (1, 32, 19, 20), (2, 2), (1, 1), "bias",
                  (2, 2, 1, 1))
    text = kernel_function("k", stem, t, threads=True)
    assert f"tensor.empty() : tensor<3x40x2x{phase_width(stem, 16)}xf32>" in text
    assert text.count("scf.forall (") == 2          # the plane's channels, the rows
    s1 = Direct((1, 32, 5, 85), (16, 32, 3, 3), (1, 16, 5, 85), (1, 1), (1, 1), "bias",
                (1, 1, 1, 1))
    assert f"tensor<32x5x1x{phase_width(s1, 16)}xf32>" in kernel_function("k", s1, t, False)
    s2 = Direct((1, 16, 9, 166), (32, 16, 3, 3), (1, 32, 5, 83), (2, 2), (1, 1), "bias",
                (1, 1, 1, 1))
    assert f"tensor<16x3x2x{phase_width(s2, 16)}xf32>" in kernel_function("k", s2, t, False)
