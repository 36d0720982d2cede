"""-O3 int8 convs on the direct VNNI kernel (passes/optimize/conv_q8.py):
strided convs through the phase-split input (3x3 stride 2, the 7x7 stride-2
stem over 3 channels, dilated and strided, a strided 1x1 as one row of
subsampled pixels), and the requantization epilogue (epilogue_q8.py): the
QLinearConv's requantization and the QDQ ops after it (DequantizeLinear, a
residual add of another dequantized tensor, ReLU, QuantizeLinear) computed
on the kernel's registers. Every result is exact: a QLinearConv equals
onnx.reference, a fused epilogue equals the same -O3 build without it bit
for bit (same ops, same order, same types); where the fusion applies, the
-O3 IR has no i32 tensor of the conv's output left."""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.isa import host_has
from onnx_mlir_py.options import Options
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import reference

VNNI = host_has("avx512vnni") and host_has("avx512f")
vnni = pytest.mark.skipif(not VNNI, reason="the int8 kernels need AVX-512 VNNI (this CPU has none)")


def _plan_and_ir(m):
    """(kernel plan entries, the -O3 MLIR) for this (VNNI) host, without codegen."""
    plans, out = [], io.StringIO()
    opts = Options(emit="EmitLib", opt_level=3)
    with redirect_stdout(out):
        run_pipeline(m, opts, None, print_ir=True, on_plan=plans.append)
    return plans[0].entries, out.getvalue()


def _x(shape, signed=False, seed=1):
    rng = np.random.default_rng(seed)
    if signed:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.integers(0, 256, shape).astype(np.uint8)


def _qconv(c, f, hw, k, stride, pads, dil=1, signed=False):
    rng = np.random.default_rng(c + 7 * f + hw)
    dt = np.int8 if signed else np.uint8
    inits = [nh.from_array(np.array(0.02, np.float32), "sx"),
             nh.from_array(np.array(-5 if signed else 120, dt), "zx"),
             nh.from_array(rng.integers(-128, 128, (f, c, k, k)).astype(np.int8), "W"),
             nh.from_array((rng.random(f) * 0.01 + 0.001).astype(np.float32), "sw"),
             nh.from_array(np.zeros(f, np.int8), "zw"),
             nh.from_array(np.array(2.0, np.float32), "sy"),
             nh.from_array(np.array(3 if signed else 128, dt), "zy"),
             nh.from_array(rng.integers(-5000, 5000, f).astype(np.int32), "B")]
    node = h.make_node("QLinearConv", ["x", "sx", "zx", "W", "sw", "zw", "sy", "zy", "B"], ["y"],
                       pads=pads, strides=[stride] * 2, dilations=[dil] * 2, kernel_shape=[k, k])
    et = TP.INT8 if signed else TP.UINT8
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", et, [1, c, hw, hw])],
                     [h.make_tensor_value_info("y", et, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@vnni
@pytest.mark.parametrize("kw", [
    dict(c=8, f=16, hw=56, k=3, stride=2, pads=[1, 1, 1, 1]),             # 28 wide: 2x2 phases
    dict(c=3, f=16, hw=60, k=7, stride=2, pads=[3, 3, 3, 3]),             # the stem: K = 3 x 49
    dict(c=8, f=16, hw=61, k=3, stride=2, dil=2, pads=[2, 1, 0, 2]),      # dilated + strided
    dict(c=16, f=32, hw=28, k=1, stride=2, pads=[0, 0, 0, 0], signed=True),  # 1x1: 196 pixels
    dict(c=8, f=8, hw=95, k=5, stride=3, pads=[2, 2, 2, 2]),              # stride 3, 8 filters
    # 25 taps or more: a loop over the filter rows (conv_q8.ROLL_TAPS), s0 rows
    # per iteration and the rest after it, with dilation (words, then bytes)
    dict(c=4, f=8, hw=50, k=7, stride=3, dil=2, pads=[3, 3, 3, 3]),
    dict(c=5, f=8, hw=41, k=5, stride=2, dil=2, pads=[4, 3, 2, 4], signed=True),
])
def test_strided_convs_take_the_direct_kernel(tmp_path, kw):
    m = _qconv(**kw)
    entries, _ = _plan_and_ir(m)
    assert len(entries) == 1 and "direct" in entries[0].reason, entries[0].line()
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    x = _x([1, kw["c"], kw["hw"], kw["hw"]], kw.get("signed", False))
    np.testing.assert_array_equal(sess.run([x])[0], reference(m, {"x": x})[0])


# -- QDQ graphs: the ops after each conv become its epilogue ----------------------------

def _qdq_block(c=16, mid=8, hw=28, down=False, signed=False, d_q=None, y_zp=0):
    """A ResNet bottleneck in QDQ form (quantize_static's layout): x (8-bit)
    -> DQ -> 1x1 -> ReLU -> Q/DQ -> 3x3 -> ReLU -> Q/DQ -> 1x1 -> Q/DQ -> Add
    (the shortcut: DQ(x), or a strided 1x1 'down' conv when ``down``) -> ReLU
    -> Q. ``d_q``: the last conv's (scale, zero point) instead of 0.08 and
    125 (-2 signed); ``y_zp`` the output's zero point."""
    rng = np.random.default_rng(5)
    dt, et = (np.int8, TP.INT8) if signed else (np.uint8, TP.UINT8)
    out_c = 2 * c if down else c
    inits, nodes = [], []

    def act_q(name, scale, zp):
        inits.extend([nh.from_array(np.array(scale, np.float32), name + "_s"),
                      nh.from_array(np.array(zp, dt), name + "_z")])

    def qdq(src, name, scale, zp):
        act_q(name, scale, zp)
        nodes.append(h.make_node("QuantizeLinear", [src, name + "_s", name + "_z"], [name + "_q"]))
        nodes.append(h.make_node("DequantizeLinear", [name + "_q", name + "_s", name + "_z"],
                                 [name + "_d"]))
        return name + "_d"

    def conv(src, sx, name, cin, cout, k, stride=1, relu=True):
        """Conv of DequantizeLinear'd s8 weights and an int32 bias of scale
        sx * sw (as onnxruntime's quantizer writes them)."""
        w = rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8)
        ws = (rng.random(cout) * 0.004 + 0.001).astype(np.float32)
        inits.extend([nh.from_array(w, name + "_w"), nh.from_array(ws, name + "_ws"),
                      nh.from_array(np.zeros(cout, np.int8), name + "_wz"),
                      nh.from_array(rng.integers(-3000, 3000, cout).astype(np.int32), name + "_bq"),
                      nh.from_array((np.float32(sx) * ws).astype(np.float32), name + "_bs"),
                      nh.from_array(np.zeros(cout, np.int32), name + "_bz")])
        nodes.append(h.make_node("DequantizeLinear", [name + "_w", name + "_ws", name + "_wz"],
                                 [name + "_wd"], axis=0))
        nodes.append(h.make_node("DequantizeLinear", [name + "_bq", name + "_bs", name + "_bz"],
                                 [name + "_b"], axis=0))
        nodes.append(h.make_node("Conv", [src, name + "_wd", name + "_b"], [name + "_c"],
                                 pads=[k // 2] * 4, strides=[stride] * 2))
        out = name + "_c"
        if relu:
            nodes.append(h.make_node("Relu", [out], [name + "_r"]))
            out = name + "_r"
        return out

    act_q("x", 0.03, -3 if signed else 110)
    nodes.append(h.make_node("DequantizeLinear", ["x", "x_s", "x_z"], ["xd"]))
    a = qdq(conv("xd", 0.03, "c1", c, mid, 1), "a", 0.05, 0)
    b = qdq(conv(a, 0.05, "c2", mid, mid, 3, stride=2 if down else 1), "b", 0.05, 0)
    d = qdq(conv(b, 0.05, "c3", mid, out_c, 1, relu=False), "d",
            *(d_q or (0.08, -2 if signed else 125)))
    if down:
        sc = qdq(conv("xd", 0.03, "dn", c, out_c, 1, stride=2, relu=False), "sc", 0.08,
                 1 if signed else 127)
    else:
        sc = "xd"
    nodes.append(h.make_node("Add", [d, sc], ["sum"]))
    nodes.append(h.make_node("Relu", ["sum"], ["sr"]))
    act_q("y", 0.06, y_zp)
    nodes.append(h.make_node("QuantizeLinear", ["sr", "y_s", "y_z"], ["y"]))
    g = h.make_graph(nodes, "block", [h.make_tensor_value_info("x", et, [1, c, hw, hw])],
                     [h.make_tensor_value_info("y", et, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    return m


def _fused_equals_unfused(tmp_path, m, shape, monkeypatch, signed=False, switch=None):
    """The -O3 library with the epilogues equals the one without them
    (conv_q8.EPILOGUES off: the requantization and the ops after it as
    separate passes; or ``switch`` = (module, flag) off) bit for bit, and
    onnxruntime's (its QDQ fusion) within
    one quantization step: the QDQ rewrite computes the conv in integers,
    as onnxruntime's optimized session does, so the unoptimized float
    reference differs by a step on rare elements (as onnxruntime's own
    levels do)."""
    import onnxruntime as ort
    from onnx_mlir_py.passes.optimize import conv_q8
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    monkeypatch.setattr(*(switch or (conv_q8, "EPILOGUES")), False)
    plain = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "plain.so", opt_level=3))
    def session(level):
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    ref, raw = session(ort.GraphOptimizationLevel.ORT_ENABLE_ALL), \
        session(ort.GraphOptimizationLevel.ORT_DISABLE_ALL)

    def steps(a, b):
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        return d.max(), (d > 0).mean()
    for seed in (1, 2):
        x = _x(shape, signed, seed)
        got = s3.run([x])
        for a, b in zip(got, plain.run([x])):
            np.testing.assert_array_equal(a, b)
        for a, b, c in zip(got, ref.run(None, {"x": x}), raw.run(None, {"x": x})):
            if a.dtype.kind == "f":     # an f32 output: one step of the dequantization before it
                np.testing.assert_allclose(a, b, rtol=0, atol=0.5 + 1e-6)
                continue
            (dmax, frac), (_, theirs) = steps(a, b), steps(b, c)
            assert dmax <= 1 and frac <= 2 * theirs + 0.005, \
                f"ours vs onnxruntime: {frac:.2%} one step off; its own levels: {theirs:.2%}"


@vnni
@pytest.mark.parametrize("down, signed", [(False, False), (True, False), (True, True)])
def test_bottleneck_block_fuses_requantization_and_residual(tmp_path, monkeypatch, down, signed):
    """Every conv of the block writes its 8-bit result directly (no i32
    tensor of a conv's output shape is left); the last conv (or the strided
    'down' conv) also computes the residual add, ReLU and QuantizeLinear,
    reading the other branch's 8-bit tensor."""
    m = _qdq_block(down=down, signed=signed)
    entries, ir = _plan_and_ir(m)
    assert [e.kernel for e in entries] == ["int8_im2col"] * (4 if down else 3)
    assert all("direct" in e.reason for e in entries), [e.line() for e in entries]
    for shape in ("28x28xi32>", "14x14xi32>"):
        assert f"tensor<1x8x{shape}" not in ir and f"tensor<1x16x{shape}" not in ir \
            and f"tensor<1x32x{shape}" not in ir, shape
    _fused_equals_unfused(tmp_path, m, [1, 16, 28, 28], monkeypatch, signed)


@vnni
@pytest.mark.parametrize("hw, down, signed", [(14, False, False), (14, True, True),
                                              (7, False, True)])
def test_tail_pixel_pairs_in_the_residual_block(tmp_path, monkeypatch, hw, down, signed):
    """ResNet's 14x14 and 7x7 maps (196 = 192 + 4 and 49 = 48 + 1 pixels):
    the 1x1 convs' last pixels with the filters in lanes
    (conv_q8.TAIL_PAIR_PIXELS), their requantization and the residual
    epilogue on the gathered lanes, equal to the 16-pixel tail vector's."""
    from onnx_mlir_py.passes.optimize import conv_q8
    m = _qdq_block(hw=hw, down=down, signed=signed)
    _fused_equals_unfused(tmp_path, m, [1, 16, hw, hw], monkeypatch, signed,
                          switch=(conv_q8, "TAIL_PAIR_PIXELS"))


def _requantized_then_dequantized(signed, scale, zp):
    """A QLinearConv (16 -> 32, 3x3 over 28x28) whose output (``scale``,
    ``zp``) is dequantized to the graph's f32 output: every clamp of the
    requantization shows in the result."""
    m = _qconv(c=16, f=32, hw=28, k=3, stride=1, pads=[1, 1, 1, 1], signed=signed)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.name == "sy":
            g.initializer[i].CopyFrom(nh.from_array(np.array(scale, np.float32), "sy"))
        elif t.name == "zy":
            g.initializer[i].CopyFrom(nh.from_array(np.array(zp, np.int8 if signed else np.uint8),
                                                    "zy"))
    g.node.extend([h.make_node("DequantizeLinear", ["y", "sy", "zy"], ["yd"])])
    del g.output[:]
    g.output.extend([h.make_tensor_value_info("yd", TP.FLOAT, None)])
    return m


@vnni
@pytest.mark.parametrize("signed, scale, zp", [(False, 0.02, 0), (False, 0.02, 255), (False, 0.05, 77),
                                               (True, 0.02, -128), (True, 0.02, 127), (True, 0.05, 0)])
def test_fast_quantization_equals_the_body_ops(tmp_path, monkeypatch, signed, scale, zp):
    """epilogue_q8.FAST_QUANT: a QuantizeLinear whose result a
    DequantizeLinear reads computed as roundeven clamped to [lo - zp, hi - zp]
    (no 8-bit round trip), the clamps as one max / min each, the bias added
    to the accumulators' start: bit-identical to the body ops as they are,
    with zero points at both ends of the range and scales that saturate
    many values at both ends (checked: the output reaches both bounds)."""
    from onnx_mlir_py.passes.optimize import epilogue_q8
    m = _requantized_then_dequantized(signed, scale, zp)
    _, ir = _plan_and_ir(m)
    assert "vector<16xf32> to vector<16xi32>" not in ir   # no fptosi / sitofp round trip
    lo, hi = (-128, 127) if signed else (0, 255)
    x = _x([1, 16, 28, 28], signed)
    y = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "y.so", opt_level=3)).run([x])[0]
    sc = np.float32(scale)
    assert y.min() == np.float32(lo - zp) * sc and y.max() == np.float32(hi - zp) * sc
    _fused_equals_unfused(tmp_path, m, [1, 16, 28, 28], monkeypatch, signed,
                          switch=(epilogue_q8, "FAST_QUANT"))


@vnni
@pytest.mark.parametrize("signed, zp", [(False, 128), (True, 0), (False, 0)])
def test_zero_sign_add_equals_the_round_trip(tmp_path, monkeypatch, signed, zp):
    """epilogue_q8.ZERO_SIGN_ADD: the fused Q -> DQ's clamped integer plus
    +0.0 (one add) gives the fptosi / sitofp round trip's f32 values bit for
    bit, the sign of every zero included (roundeven of y in (-0.5, 0) is
    -0.0; both give +0.0), on an f32 output that shows them."""
    from onnx_mlir_py.passes.optimize import epilogue_q8
    m = _requantized_then_dequantized(signed, 0.02, zp)
    on = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "on.so", opt_level=3))
    monkeypatch.setattr(epilogue_q8, "ZERO_SIGN_ADD", False)
    off = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "off.so", opt_level=3))
    for seed in (1, 2):
        x = _x([1, 16, 28, 28], signed, seed)
        a, b = on.run([x])[0], off.run([x])[0]
        assert (a == 0).sum() > 0 and not np.signbit(a[a == 0]).any()
        np.testing.assert_array_equal(a.view(np.int32), b.view(np.int32))


@vnni
@pytest.mark.parametrize("signed, y_zp", [(False, 0), (True, 0), (False, 100), (True, -20),
                                          (True, 30)])
def test_fast_quantization_in_the_residual_block(tmp_path, monkeypatch, signed, y_zp):
    """FAST_QUANT on a bottleneck block (the fused Q/DQ pair before the
    residual add, then the ReLU and the final QuantizeLinear): bit-identical
    without it, with the output's zero point above, at and below 0.
    QuantizeLinear's NaN guard (``select(y != y, -inf, y)``, 6fa5cb3) is
    not emitted (the tail's clamp gives NaN the lower bound as it gives
    -inf), and so the ReLU is no longer folded into the clamp's lower
    bound max(lo, zero point): that bound would be NaN's value too, where
    QuantizeLinear gives NaN the lowest value (its maximumf stays)."""
    from onnx_mlir_py.passes.optimize import epilogue_q8
    m = _qdq_block(down=True, signed=signed, d_q=(0.03, -100 if signed else 200), y_zp=y_zp)
    _, ir = _plan_and_ir(m)
    assert "arith.cmpf uno" not in ir and "arith.maximumf" in ir
    _fused_equals_unfused(tmp_path, m, [1, 16, 28, 28], monkeypatch, signed,
                          switch=(epilogue_q8, "FAST_QUANT"))


@vnni
def test_conv_then_float_consumer_writes_f32(tmp_path, monkeypatch):
    """A QLinearConv whose output is dequantized for an f32 op (MobileNet's
    depthwise conv): the kernel writes the f32 values itself."""
    m = _qconv(c=16, f=32, hw=28, k=1, stride=1, pads=[0, 0, 0, 0])
    g = m.graph
    g.initializer.extend([nh.from_array(np.array(0.5, np.float32), "ds")])
    g.node.extend([h.make_node("DequantizeLinear", ["y", "ds", "zy"], ["yd"]),
                   h.make_node("Sigmoid", ["yd"], ["out"])])
    del g.output[:]
    g.output.extend([h.make_tensor_value_info("out", TP.FLOAT, None)])
    _, ir = _plan_and_ir(m)
    assert "tensor<1x32x28x28xi32>" not in ir and "tensor<1x32x28x28xi8>" not in ir
    _fused_equals_unfused(tmp_path, m, [1, 16, 28, 28], monkeypatch)


@vnni
def test_requantized_result_with_two_users_stays_8_bit(tmp_path):
    """The conv's 8-bit result also leaves the graph: the epilogue stops at
    the requantization (the consumers read the 8-bit tensor), still exact."""
    m = _qconv(c=16, f=32, hw=28, k=3, stride=1, pads=[1, 1, 1, 1])
    g = m.graph
    g.initializer.extend([nh.from_array(np.array(0.5, np.float32), "ds")])
    g.node.extend([h.make_node("DequantizeLinear", ["y", "ds", "zy"], ["yd"])])
    g.output.extend([h.make_tensor_value_info("yd", TP.FLOAT, None)])
    _, ir = _plan_and_ir(m)
    assert "tensor<1x32x28x28xi32>" not in ir
    s3 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3))
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    x = _x([1, 16, 28, 28])
    for got, want in zip(s3.run([x]), s0.run([x])):
        np.testing.assert_array_equal(got, want)



def _two_qconvs():
    """Two QLinearConvs of one shape in a row (16 -> 16, 3x3 over 28x28,
    input zero points 0), every scale and the output zero points different:
    0.5 -> 0.4 (zero point 0) -> 0.7 (zero point 3), weight scales about
    0.003 and 0.004 per channel."""
    rng = np.random.default_rng(3)
    inits = [nh.from_array(np.array(0.5, np.float32), "s0"),
             nh.from_array(np.array(0.4, np.float32), "s1"),
             nh.from_array(np.array(0.7, np.float32), "s2"),
             nh.from_array(np.array(0, np.uint8), "z0"),
             nh.from_array(np.array(3, np.uint8), "z2"),
             nh.from_array(np.zeros(16, np.int8), "zw")]
    nodes = []
    for i, (src, s, out_s, out_z, sw) in enumerate(
            [("x", "s0", "s1", "z0", 0.003), ("y0", "s1", "s2", "z2", 0.004)]):
        inits += [nh.from_array(rng.integers(-128, 128, (16, 16, 3, 3)).astype(np.int8), f"W{i}"),
                  nh.from_array((np.full(16, sw) * (1 + 0.1 * rng.random(16)))
                                .astype(np.float32), f"sw{i}"),
                  nh.from_array(rng.integers(-5000, 5000, 16).astype(np.int32), f"B{i}")]
        nodes.append(h.make_node("QLinearConv", [src, s, "z0", f"W{i}", f"sw{i}", "zw", out_s,
                                                 out_z, f"B{i}"], [f"y{i}"], pads=[1, 1, 1, 1],
                                 kernel_shape=[3, 3]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.UINT8, [1, 16, 28, 28])],
                     [h.make_tensor_value_info("y1", TP.UINT8, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@vnni
def test_convs_differing_in_scales_share_a_kernel_function(tmp_path, monkeypatch):
    """Issue #29: the per-tensor scales and zero points of an epilogue are
    read from the kernel's operands (not folded into vector constants), so
    two convs of one shape whose scales differ compile to one kernel
    function (codegen/kernel_functions.py, run by the -O3 stage, merges them; it did not when each
    kernel had its own constants); each still computes with its own scales:
    equal to onnx.reference (exact)."""
    from onnx_mlir_py.codegen import kernel_functions
    from onnx_mlir_py.codegen import llvm as codegen_llvm
    real = kernel_functions.outline_kernels
    counts = []

    def spy(module, entry):
        counts.append(real(module, entry))
        return counts[-1]
    monkeypatch.setattr(codegen_llvm, "outline_kernels", spy)
    monkeypatch.setattr(kernel_functions, "outline_kernels", spy)     # the -O3 step's
    m = _two_qconvs()
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    for seed in (1, 2):
        x = _x([1, 16, 28, 28], seed=seed)
        np.testing.assert_array_equal(sess.run([x])[0], reference(m, {"x": x})[0])
    # (kernels outlined, copies merged away): by the -O3 stage, none left to codegen
    assert counts == [(2, 1), (0, 0)], counts


def test_overflow_flags_read_from_the_attribute():
    """epilogue_q8.acc_offset moves a bias add into the accumulators only
    without nsw / nuw; it reads the flags from the op's attribute (printing
    the op numbered the model's whole function: 51 of the 61 s of ResNet-50
    QDQ's 'int8 convs' step)."""
    import mlir.ir as ir
    from onnx_mlir_py.passes.optimize.epilogue_q8 import _overflow_flagged
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("""func.func @f(%a: i32, %b: i32) -> (i32, i32, i32, i32) {
          %0 = arith.addi %a, %b : i32
          %1 = arith.addi %a, %b overflow<nsw> : i32
          %2 = arith.addi %a, %b overflow<nuw> : i32
          %3 = arith.addi %a, %b overflow<nsw, nuw> : i32
          return %0, %1, %2, %3 : i32, i32, i32, i32
        }""")
        ops = list(m.body.operations[0].regions[0].blocks[0].operations)[:4]
        assert [_overflow_flagged(o) for o in ops] == [False, True, True, True]
        bare = ir.Operation.create("arith.addi", results=[ops[0].results[0].type],
                                   operands=list(ops[0].operands), ip=ir.InsertionPoint(ops[0]))
        assert not _overflow_flagged(bare)      # no attribute at all: no flags


@vnni
@pytest.mark.parametrize("hw, down, signed", [(7, False, True), (7, False, False), (14, True, True),
                                              (28, True, False)])
def test_magic_rounding_equals_roundeven(tmp_path, monkeypatch, hw, down, signed):
    """epilogue_q8.MAGIC_ROUND: each conv's quantizing tail (the block's
    requantizations with and without a ReLU, the final one after the
    residual add) rounded by adding 1.5 * 2^23 gives the bytes of
    roundeven + zero point + clamp + fptosi bit for bit, on full vectors and
    on a row's one-pixel tail (7x7: 49 = 48 + 1, stored through a one-lane
    mask: arith.trunci of the float's bits there was stored as a whole f32
    lane by LLVM, overwriting the next filter's first pixels)."""
    from onnx_mlir_py.passes.optimize import epilogue_q8
    m = _qdq_block(hw=hw, down=down, signed=signed)
    _fused_equals_unfused(tmp_path, m, [1, 16, hw, hw], monkeypatch, signed,
                          switch=(epilogue_q8, "MAGIC_ROUND"))


@vnni
def test_step_bodies_read_once_emit_the_same_ir(monkeypatch):
    """A kernel emits each epilogue step's body for every tile and tail;
    epilogue_q8._step_body reads a step's ops through the bindings once per
    epilogue (#29). The -O3 IR equals the one emitted re-reading them each
    time, and the reads were fewer than the emissions."""
    from onnx_mlir_py.passes.optimize import epilogue_q8
    m = _qdq_block(down=True, signed=False)
    orig = epilogue_q8._step_body
    calls, reads = [0], [0]

    def counted(epi, i):
        calls[0] += 1
        reads[0] += i not in epi.__dict__.get("_bodies", {})
        return orig(epi, i)
    monkeypatch.setattr(epilogue_q8, "_step_body", counted)
    _, cached = _plan_and_ir(m)
    assert 0 < reads[0] < calls[0]

    def fresh(epi, i):
        epi.__dict__.pop("_bodies", None)
        return orig(epi, i)
    monkeypatch.setattr(epilogue_q8, "_step_body", fresh)
    _, reread = _plan_and_ir(m)
    assert cached == reread
