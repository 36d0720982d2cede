"""-O3 int8 convolutions on VNNI (passes/optimize/conv_q8.py): QLinearConv and
ConvInteger with constant s8 filters run on the direct kernel (stride 1) or
an 8-bit im2col + the VNNI int8 matmul. Exact against onnx.reference (QLinearConv) / onnxruntime
(ConvInteger) and against the -O0 build, for 3x3 / 1x1 / strided / dilated /
asymmetrically padded convs, u8 and s8 inputs, batch 2, K not a multiple of
4 (3 input channels, 7x7 filter); on an AVX-512 VNNI CPU the library must
use the kernel, without VNNI it must not."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.isa import host_has
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import reference

VNNI = host_has("avx512vnni") and host_has("avx512f")


def qlinear_conv(c, f, hw, k, stride=1, pads=None, dil=1, signed=False, batch=1, seed=0):
    rng = np.random.default_rng(seed)
    pads = pads if pads is not None else [k // 2] * 4
    inits = [nh.from_array(np.array(0.02, np.float32), "sx"),
             nh.from_array(np.array(-5 if signed else 120, np.int8 if signed else np.uint8), "zx"),
             nh.from_array(rng.integers(-128, 128, (f, c, k, k)).astype(np.int8), "W"),
             nh.from_array((rng.random(f) * 0.01 + 0.001).astype(np.float32), "sw"),
             nh.from_array(np.zeros(f, np.int8), "zw"),
             nh.from_array(np.array(2.0, np.float32), "sy"),
             nh.from_array(np.array(128, np.uint8), "zy"),
             nh.from_array(rng.integers(-5000, 5000, f).astype(np.int32), "B")]
    node = h.make_node("QLinearConv", ["x", "sx", "zx", "W", "sw", "zw", "sy", "zy", "B"], ["y"],
                       pads=pads, strides=[stride] * 2, dilations=[dil] * 2, kernel_shape=[k, k])
    hh, ww = hw if isinstance(hw, tuple) else (hw, hw)
    g = h.make_graph([node], "g", [h.make_tensor_value_info(
        "x", TP.INT8 if signed else TP.UINT8, [batch, c, hh, ww])],
        [h.make_tensor_value_info("y", TP.UINT8, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _x(m, seed=1):
    t = m.graph.input[0].type.tensor_type
    shape = [d.dim_value for d in t.shape.dim]
    rng = np.random.default_rng(seed)
    if t.elem_type == TP.INT8:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.integers(0, 256, shape).astype(np.uint8)


def _uses_vnni(sess) -> bool:
    """An int8 kernel ran: VNNI's, or on a CPU with AMX-INT8 its AMX kernel
    (matmul_q8_amx.py: the matmuls and the im2col convs' matmuls)."""
    feats = (sess.target or {}).get("features", [])
    return "avx512vnni" in feats or "amx-int8" in feats


def _o3_and_o0(m, tmp_path):
    """``m`` compiled at -O3 (on the VNNI kernels where the CPU has them) and
    at -O0, loaded."""
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    assert _uses_vnni(s3) == VNNI
    return s3, s0


def _uint8_model(nodes, inits, x_shape):
    """A graph of QLinearConv ``nodes`` from a u8 input ``x`` to a u8 ``y``."""
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.UINT8, x_shape)],
                     [h.make_tensor_value_info("y", TP.UINT8, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("kw", [
    dict(c=8, f=16, hw=6, k=3),                                  # 3x3, pad 1
    dict(c=16, f=32, hw=5, k=1, pads=[0, 0, 0, 0]),              # 1x1
    dict(c=8, f=16, hw=9, k=3, stride=2),                        # strided
    dict(c=8, f=16, hw=9, k=3, dil=2, pads=[2, 1, 0, 2]),        # dilated, asymmetric pads
    dict(c=8, f=16, hw=6, k=3, signed=True),                     # s8 input
    dict(c=3, f=16, hw=11, k=7, stride=2, pads=[3, 3, 3, 3], batch=2),   # K = 147, 2 images
    dict(c=6, f=24, hw=7, k=3, batch=2),                         # direct: 24 filters, C % 4 != 0
    dict(c=16, f=8, hw=37, k=1, pads=[0, 0, 0, 0], signed=True),  # direct 1x1, 37-pixel rows
    dict(c=8, f=16, hw=20, k=5, pads=[2, 2, 2, 2]),              # direct 5x5, rows past 32 pixels
    dict(c=12, f=32, hw=7, k=1, pads=[0, 0, 0, 0], batch=2),     # 1x1: one row of 49 pixels
    dict(c=8, f=16, hw=14, k=1, pads=[0, 0, 0, 0]),              # 196 pixels: 4 in a 1-vector tail
    dict(c=8, f=24, hw=11, k=1, pads=[0, 0, 0, 0], batch=2),     # 121 pixels: 96 + a 2-vector tail
    dict(c=8, f=8, hw=40, k=3),                                  # rows of 32 + 8 (masked tail)
    dict(c=8, f=24, hw=48, k=3, signed=True),                    # rows of 32 + a 16-pixel tail
])
def test_qlinear_conv(tmp_path, kw):
    m = qlinear_conv(**kw)
    s3, s0 = _o3_and_o0(m, tmp_path)
    x = _x(m)
    got = s3.run([x])[0]
    np.testing.assert_array_equal(got, s0.run([x])[0])
    np.testing.assert_array_equal(got, reference(m, {"x": x})[0])


def test_row_blocks():
    """The direct kernel computes a row as whole blocks of NV vectors (a
    1x1 conv's image: NV_FLAT) and a last block of as few vectors as hold
    the rest (ResNet's 196- and 784-pixel 1x1 images: one)."""
    from onnx_mlir_py.passes.optimize import conv_q8
    assert (conv_q8.NV, conv_q8.NV_FLAT) == (2, 3)
    assert [conv_q8._row_blocks(w) for w in (56, 196, 784, 49, 64, 14, 3136)] == \
        [(32, 2), (192, 1), (768, 1), (32, 2), (64, 0), (0, 1), (3136, 0)]
    assert [conv_q8._row_blocks(w, 3) for w in (56, 196, 784, 49, 28, 3136)] == \
        [(48, 1), (192, 1), (768, 1), (48, 1), (0, 2), (3120, 1)]
    assert [conv_q8._row_lanes(w, 3) for w in (196, 784, 49, 3136)] == [208, 784, 64, 3136]


@pytest.mark.skipif(not VNNI, reason="the direct kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=8, f=8, hw=13, k=3, stride=2),                        # 2x2 phases of i32 words
    dict(c=8, f=8, hw=40, k=3, signed=True),                     # pad words of zx = -5
    dict(c=8, f=24, hw=9, k=3, dil=2, pads=[2, 1, 0, 2], batch=2),
    dict(c=16, f=32, hw=14, k=1, pads=[0, 0, 0, 0]),             # one row, 12 pad columns
])
def test_word_and_byte_relayouts_agree(tmp_path, monkeypatch, kw):
    """conv_q8.PACKED_WORDS: the direct kernel's input as i32 words of 4
    channels (padding words of the zero point's 4 bytes) gives the byte
    relayout's results and onnx.reference's, bit for bit."""
    _on_off_agree(tmp_path, monkeypatch, qlinear_conv(**kw), "PACKED_WORDS")


def test_padded_rows_choice():
    """conv_q8.padded_rows: ResNet's 56- and 28-pixel 3x3 rows (and the
    3x3/2 convs to them) are computed over their padded width, rows that
    fill their blocks, rows under 16 pixels, 1x1 images and C % 4 != 0 not."""
    from onnx_mlir_py.passes.optimize import conv_q8

    def q(c, hw, k, stride=1, pad=None, ow=None):
        pad = k // 2 if pad is None else pad
        ow = ow or (hw + 2 * pad - k) // stride + 1
        return conv_q8.Q8Conv(None, False, None, False, None, (pad,) * 4, (1, c, hw, hw),
                              (64, c, k, k), (1, 64, ow, ow), (stride, stride), (1, 1))
    assert [conv_q8.padded_rows(q(*a)) for a in [(64, 56, 3), (128, 28, 3), (128, 56, 3, 2),
                                                 (64, 48, 3), (256, 14, 3), (64, 56, 1, 1, 0),
                                                 (3, 224, 7, 2)]] == \
        [True, True, True, False, False, False, False]
    assert conv_q8._padded_width(q(64, 56, 3)) == 57      # the pad columns shared
    assert conv_q8._padded_width(q(128, 56, 3, 2)) == 29


@pytest.mark.skipif(not VNNI, reason="the direct kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=8, f=16, hw=40, k=3),                                 # im2col in row blocks
    dict(c=8, f=8, hw=57, k=3, stride=2),                        # phases of 30 words
    dict(c=8, f=24, hw=20, k=3, dil=2, pads=[2, 1, 0, 2], batch=2),   # 19-pixel rows
    dict(c=8, f=16, hw=40, k=5, pads=[2, 2, 2, 2], signed=True),
    dict(c=8, f=8, hw=35, k=3, stride=2, pads=[0, 1, 1, 0]),     # 17 pixels, asymmetric
    dict(c=8, f=16, hw=28, k=3, pads=[1, 2, 1, 0]),              # left pad 2, right 0
    dict(c=8, f=8, hw=24, k=5, pads=[0, 1, 3, 3], signed=True),  # left 1, right 3: wraps 1
])
def test_padded_rows_agree(tmp_path, monkeypatch, kw):
    """conv_q8.PADDED_ROWS: the conv computed as one row over its padded
    planes, each vector stored by two masked stores (the row's lanes and the
    next row's), gives the row-block build's and onnx.reference's results,
    at 1 and 2 threads (filter blocks split across the pool)."""
    from onnx_mlir_py.passes.optimize import conv_q8
    m = qlinear_conv(**kw)
    assert conv_q8.padded_rows(_q8(m))
    _on_off_agree(tmp_path, monkeypatch, m, "PADDED_ROWS")
    x = _x(m, 5)
    got = ExecutionSession(str(tmp_path / "on.so"), num_threads=2).run([x])[0]
    np.testing.assert_array_equal(got, reference(m, {"x": x})[0])


@pytest.mark.skipif(not VNNI, reason="the direct kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=8, f=16, hw=40, k=3),                                 # two filter blocks
    dict(c=6, f=24, hw=9, k=3, stride=2, batch=2),               # C % 4 != 0: padded taps
    dict(c=16, f=8, hw=14, k=1, pads=[0, 0, 0, 0], signed=True),
])
def test_filter_blocks_agree(tmp_path, monkeypatch, kw):
    """conv_q8.FILTER_BLOCKS: the filters as [F/8, C4*KH*KW, 8, 4] (a
    tile's 8 filters side by side) give the per-filter rows' results and
    onnx.reference's."""
    _on_off_agree(tmp_path, monkeypatch, qlinear_conv(**kw), "FILTER_BLOCKS")


@pytest.mark.skipif(not VNNI, reason="the direct kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=12, f=16, hw=7),                                      # 49 = 48 + 1; 3 channel words
    dict(c=8, f=8, hw=(5, 10), signed=True),                     # 50 = 48 + 2; 2 words
    dict(c=16, f=24, hw=(3, 17)),                                # 51 = 48 + 3; 4 words
    dict(c=32, f=16, hw=14, signed=True, batch=2),               # 196 = 192 + 4; 8 words
    dict(c=20, f=8, hw=(1, 4)),                                  # 4 pixels: no whole block
])
def test_tail_pixel_pairs(tmp_path, monkeypatch, kw):
    """A 1x1 conv's last 1-4 pixels with the filters in lanes
    (conv_q8.pair_block, TAIL_PAIR_PIXELS) give the 16-pixel tail vector's
    results and onnx.reference's, at 1 and 2 threads."""
    from onnx_mlir_py.passes.optimize import conv_q8
    m = qlinear_conv(k=1, pads=[0, 0, 0, 0], **kw)
    assert conv_q8.TAIL_PAIR_PIXELS == 4
    on = onnx_mlir_py.compile(m, tmp_path / "on.so", opt_level=3)
    monkeypatch.setattr(conv_q8, "TAIL_PAIR_PIXELS", 0)
    off = onnx_mlir_py.compile(m, tmp_path / "off.so", opt_level=3)
    assert open(on, "rb").read() != open(off, "rb").read()
    for seed in (3, 4):
        x = _x(m, seed)
        want = reference(m, {"x": x})[0]
        np.testing.assert_array_equal(ExecutionSession(off).run([x])[0], want)
        for threads in (1, 2):
            np.testing.assert_array_equal(ExecutionSession(on, num_threads=threads).run([x])[0],
                                          want)


def _q8(m):
    """The conv_q8.Q8Conv of a one-QLinearConv model (shapes and attributes only)."""
    from onnx_mlir_py.passes.optimize import conv_q8
    node = m.graph.node[0]
    a = {x.name: list(x.ints) for x in node.attribute}
    x = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    w = [i for i in m.graph.initializer if i.name == "W"][0].dims
    (s0, s1), (d0, d1), p = a["strides"], a["dilations"], a["pads"]
    oh = (x[2] + p[0] + p[2] - d0 * (w[2] - 1) - 1) // s0 + 1
    ow = (x[3] + p[1] + p[3] - d1 * (w[3] - 1) - 1) // s1 + 1
    return conv_q8.Q8Conv(None, False, None, False, None, (p[0], p[1], p[2], p[3]), tuple(x),
                          tuple(w), (x[0], w[0], oh, ow), (s0, s1), (d0, d1))


def _on_off_agree(tmp_path, monkeypatch, m, flag: str):
    """The -O3 library with conv_q8.<flag> on (the default) differs from the
    one with it off and both give onnx.reference's results, bit for bit."""
    from onnx_mlir_py.passes.optimize import conv_q8
    assert getattr(conv_q8, flag) is True
    on = onnx_mlir_py.compile(m, tmp_path / "on.so", opt_level=3)
    monkeypatch.setattr(conv_q8, flag, False)
    off = onnx_mlir_py.compile(m, tmp_path / "off.so", opt_level=3)
    assert open(on, "rb").read() != open(off, "rb").read()
    x = _x(m, 3)
    got = ExecutionSession(on).run([x])[0]
    np.testing.assert_array_equal(got, ExecutionSession(off).run([x])[0])
    np.testing.assert_array_equal(got, reference(m, {"x": x})[0])


@pytest.mark.skipif(not VNNI, reason="the im2col kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=16, f=32, hw=14, k=3),                                # 196 pixels: 12 blocks + 4 rows
    dict(c=8, f=16, hw=3, k=3, signed=True),                     # 9 pixels: the short block only
    dict(c=8, f=48, hw=8, k=3, stride=2),                        # 16 pixels: one whole block
])
def test_im2col_block_transpose(tmp_path, monkeypatch, kw):
    """conv_q8.BLOCK_TRANSPOSE: the im2col form's [pixels, filters] result
    goes back to NCHW in 16x16 register blocks; equal to the
    linalg.transpose build and to onnx.reference."""
    _on_off_agree(tmp_path, monkeypatch, qlinear_conv(**kw), "BLOCK_TRANSPOSE")


@pytest.mark.skipif(not VNNI, reason="the im2col kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=64, f=16, hw=14, k=3),                                # 196 pixels: 12 blocks + 4
    dict(c=128, f=32, hw=7, k=3, signed=True),                   # 49 pixels: 3 blocks + 1
    dict(c=64, f=16, hw=28, k=3, stride=2),                      # ResNet's 3x3/2 to 14x14
    dict(c=64, f=16, hw=3, k=3),                                 # 9 pixels: the short block only
])
def test_im2col_word_nhwc(tmp_path, monkeypatch, kw):
    """conv_q8.WORD_NHWC: the im2col kernel's input goes to NHWC as 4-channel
    words transposed in 16x16 blocks; equal to the linalg.transpose build
    and to onnx.reference, bit for bit."""
    from onnx_mlir_py.passes.optimize import conv_q8
    assert conv_q8.word_nhwc((1, kw["c"], kw["hw"], kw["hw"]))
    _on_off_agree(tmp_path, monkeypatch, qlinear_conv(**kw), "WORD_NHWC")


def test_conv_integer(tmp_path):
    rng = np.random.default_rng(4)
    g = h.make_graph([h.make_node("ConvInteger", ["x", "W", "zx"], ["y"], pads=[1, 1, 1, 1])], "g",
                     [h.make_tensor_value_info("x", TP.UINT8, [1, 12, 7, 7])],
                     [h.make_tensor_value_info("y", TP.INT32, None)],
                     initializer=[nh.from_array(rng.integers(-128, 128, (32, 12, 3, 3))
                                                .astype(np.int8), "W"),
                                  nh.from_array(np.array(77, np.uint8), "zx")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    assert _uses_vnni(sess) == VNNI
    x = _x(m, 2)
    np.testing.assert_array_equal(sess.run([x])[0], reference(m, {"x": x}, "onnxruntime")[0])


def test_filters_no_kernel_takes_keep_the_generic_conv(tmp_path):
    """12 filters: not a multiple of 8 (direct kernel) nor of 16 (im2col)."""
    m = qlinear_conv(c=8, f=12, hw=6, k=3)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    assert not _uses_vnni(sess)
    x = _x(m)
    np.testing.assert_array_equal(sess.run([x])[0], reference(m, {"x": x})[0])


def test_direct_kernel_two_threads(tmp_path):
    """A 28-pixel-wide conv (the direct kernel's blocks 7/8 full) at 1 and 2
    threads (filter blocks split across the pool), against -O0."""
    m = qlinear_conv(c=12, f=32, hw=28, k=3)
    so = onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3)
    want = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0)).run([_x(m)])[0]
    for threads in (1, 2):
        sess = ExecutionSession(so, num_threads=threads)
        assert _uses_vnni(sess) == VNNI
        for _ in range(3):
            np.testing.assert_array_equal(sess.run([_x(m)])[0], want)


def test_two_direct_convs_in_one_model(tmp_path):
    """Two direct-kernel convs of different shapes in one model (each kernel
    declares the VNNI step; the module gets one definition): compiles (it
    failed to parse) and equals -O0."""
    rng = np.random.default_rng(8)
    inits = [nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(100, np.uint8), "z"),
             nh.from_array(rng.integers(-100, 100, (16, 8, 3, 3)).astype(np.int8), "W1"),
             nh.from_array(rng.integers(-100, 100, (8, 16, 1, 1)).astype(np.int8), "W2"),
             nh.from_array(np.array(0.01, np.float32), "sw"), nh.from_array(np.array(0, np.int8), "zw")]
    nodes = [h.make_node("QLinearConv", ["x", "s", "z", "W1", "sw", "zw", "s", "z"], ["a"],
                         pads=[1, 1, 1, 1]),
             h.make_node("QLinearConv", ["a", "s", "z", "W2", "sw", "zw", "s", "z"], ["y"])]
    m = _uint8_model(nodes, inits, [1, 8, 28, 28])
    s3, s0 = _o3_and_o0(m, tmp_path)
    x = _x(m)
    np.testing.assert_array_equal(s3.run([x])[0], s0.run([x])[0])


def test_direct_and_im2col_convs_in_one_model(tmp_path):
    """A direct-kernel conv (stride 1, 28 wide) then an im2col conv (stride 2)
    whose matmul kernel comes later: one VNNI placeholder in the module (two
    crashed the compiler on a duplicate symbol), equal to -O0."""
    rng = np.random.default_rng(9)
    inits = [nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(100, np.uint8), "z"),
             nh.from_array(rng.integers(-100, 100, (16, 8, 3, 3)).astype(np.int8), "W1"),
             nh.from_array(rng.integers(-100, 100, (32, 16, 3, 3)).astype(np.int8), "W2"),
             nh.from_array(np.array(0.01, np.float32), "sw"), nh.from_array(np.array(0, np.int8), "zw")]
    nodes = [h.make_node("QLinearConv", ["x", "s", "z", "W1", "sw", "zw", "s", "z"], ["a"],
                         pads=[1, 1, 1, 1]),
             h.make_node("QLinearConv", ["a", "s", "z", "W2", "sw", "zw", "s", "z"], ["y"],
                         pads=[1, 1, 1, 1], strides=[2, 2])]
    m = _uint8_model(nodes, inits, [1, 8, 28, 28])
    s3, s0 = _o3_and_o0(m, tmp_path)
    x = _x(m)
    np.testing.assert_array_equal(s3.run([x])[0], s0.run([x])[0])


def test_convs_of_one_kernel_text_share_its_function(tmp_path):
    """Two direct convs (3x3 at 28x28) and two im2col convs (3x3 at 14x14,
    whose function calls its block transpose) of equal shapes but their own
    weights (then a stride-2 one of its own): conv_q8 builds one function
    per kernel text and inlines it at each call (conv_q8._inline: the body
    moves to the last call, copies to the others, helpers too); the result
    equals onnx.reference and -O0."""
    rng = np.random.default_rng(10)
    w = lambda n, shape: nh.from_array(rng.integers(-100, 100, shape).astype(np.int8), n)  # noqa: E731
    inits = [nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(100, np.uint8), "z"),
             w("W1", (16, 16, 3, 3)), w("W2", (16, 16, 3, 3)), w("W3", (32, 16, 3, 3)),
             w("W4", (32, 32, 3, 3)), w("W5", (32, 32, 3, 3)),
             nh.from_array(np.array(0.01, np.float32), "sw"), nh.from_array(np.array(0, np.int8), "zw")]
    conv = lambda i, o, wn, sw, s, z, **kw: h.make_node(  # noqa: E731
        "QLinearConv", [i, "s", "z", wn, sw, "zw", s, z], [o], pads=[1, 1, 1, 1], **kw)
    nodes = [conv("x", "a", "W1", "sw", "s", "z"), conv("a", "b", "W2", "sw", "s", "z"),
             conv("b", "c", "W3", "sw", "s", "z", strides=[2, 2]),
             conv("c", "d", "W4", "sw", "s", "z"), conv("d", "y", "W5", "sw", "s", "z")]
    m = _uint8_model(nodes, inits, [1, 16, 28, 28])
    s3, s0 = _o3_and_o0(m, tmp_path)
    for seed in (1, 2):
        x = _x(m, seed)
        got = s3.run([x])[0]
        np.testing.assert_array_equal(got, reference(m, {"x": x})[0])
        np.testing.assert_array_equal(got, s0.run([x])[0])


def test_per_channel_zero_points_stored_as_resource(tmp_path):
    """1280 filters: the per-channel zero point (1280 zeros) is a
    dense_resource constant; the kernel must still take the conv (the generic
    i32 conv it fell back to ran MobileNetV2's last conv 40x slower)."""
    m = qlinear_conv(c=16, f=1280, hw=3, k=1, pads=[0, 0, 0, 0])
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    assert _uses_vnni(s3) == VNNI
    x = _x(m)
    np.testing.assert_array_equal(s3.run([x])[0], reference(m, {"x": x})[0])


@pytest.mark.skipif(not VNNI, reason="the direct kernel needs AVX-512 VNNI")
@pytest.mark.parametrize("kw", [
    dict(c=8, f=8, hw=41, k=3, stride=2),                        # odd: 1 block of 16 + 6 words
    dict(c=8, f=16, hw=64, k=3, stride=2, signed=True, batch=2),  # 2 blocks + 1, 2 images
    dict(c=4, f=8, hw=30, k=3, stride=2, pads=[0, 1, 2, 0]),      # asymmetric pads
    dict(c=8, f=8, hw=56, k=1, stride=2, pads=[0, 0, 0, 0]),      # 1x1/2: a 56-byte row's 28
    dict(c=8, f=8, hw=131, k=1, stride=2, pads=[0, 0, 0, 0], batch=2),  # 66 = 2x32 + 2, odd rows
    dict(c=8, f=8, hw=9, k=1, stride=2, pads=[0, 0, 0, 0], signed=True),
])
def test_split_shuffles_agree(tmp_path, monkeypatch, kw):
    """conv_q8.SPLIT_SHUFFLES: the stride-2 phase split of the direct
    kernel's input words (and a strided 1x1 conv's subsampling of bytes) by
    vector reads and even/odd shuffles gives the strided generic's results
    and onnx.reference's, bit for bit."""
    _on_off_agree(tmp_path, monkeypatch, qlinear_conv(**kw), "SPLIT_SHUFFLES")
