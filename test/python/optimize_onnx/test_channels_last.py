"""optimize_onnx/channels_last.py (channels-last-convs): under --precision
bf16 on an AMX-BF16 target the convs become NhwcConv and the transposes
between them cancel. The Transposes left are counted on small graphs
(conv-relu-conv, ResNet's basic block and bottleneck with a downsample
branch, conv -> MaxPool -> conv and AveragePool, a GlobalAveragePool head,
constants of every broadcasting shape), each compiled with --precision bf16 at -O3 and
compared with the f32 result: within bf16's error (2^-8 sqrt(K) of the
output's scale) and, where the fuzzer's oracle bounds every op
(testing/fuzz/bf16_bound.py), per element; and with the bf16 arithmetic in
f32 (onnx.reference of the model whose contraction inputs are rounded to
bf16) to f32 rounding. The rewrite does not run without bf16, below -O3,
or for a target without AMX (Zen 4)."""
from __future__ import annotations

import math

import mlir.ir as ir
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.dialects.onnx.opview import is_onnx_op
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.onnx_to_linalg.bf16 import mark
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.optimize_onnx.channels_last import AMX_BF16_ATTR
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import resolve
from onnx_mlir_py.testing.fuzz.bf16_bound import Unbounded, bounds, compare, rounded_model
from onnx_mlir_py.verify.values import expose_values

HOST = resolve(None, None, host_default=True)
needs_amx = pytest.mark.skipif(not HOST.amx_bf16, reason="the build machine has no AMX-BF16")


class G:
    """A graph builder: NCHW f32, weights random initializers."""

    def __init__(self, x_shape, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.k = [], [], 0
        self.x_shape = list(x_shape)
        self.c = x_shape[1]
        self.kmax = 1

    def _name(self, p):
        self.k += 1
        return f"{p}{self.k}"

    def const(self, arr):
        n = self._name("c")
        self.inits.append(nh.from_array(np.asarray(arr, np.float32), n))
        return n

    def op(self, op_type, ins, **attrs):
        y = self._name(op_type.lower())
        self.nodes.append(h.make_node(op_type, ins, [y], **attrs))
        return y

    def conv(self, x, c_in, c_out, k=3, stride=1, pad=None, bias=True, **attrs):
        pad = k // 2 if pad is None else pad
        w = self.const(self.rng.standard_normal([c_out, c_in, k, k]) / math.sqrt(c_in * k * k))
        self.kmax = max(self.kmax, c_in * k * k)
        ins = [x, w] + ([self.const(self.rng.standard_normal(c_out) * 0.1)] if bias else [])
        return self.op("Conv", ins, pads=[pad] * 4, strides=[stride] * 2, **attrs)

    def model(self, y):
        self.nodes[-1].output[0] = "y"
        g = h.make_graph(self.nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, self.x_shape)],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        return m


def conv_relu_conv():
    g = G([1, 8, 10, 10])
    return g, g.model(g.conv(g.op("Relu", [g.conv("x", 8, 16)]), 16, 8, stride=2)), 2


def basic_block():
    """A stem conv, then ResNet's basic block: its input feeds conv1 and the
    residual Add."""
    g = G([2, 3, 12, 12])
    a = g.op("Relu", [g.conv("x", 3, 16)])
    b = g.op("Relu", [g.conv(a, 16, 16)])
    y = g.op("Relu", [g.op("Add", [g.conv(b, 16, 16), a])])
    return g, g.model(g.conv(y, 16, 8, k=1)), 2


def bottleneck():
    """ResNet's bottleneck with a downsample branch (1x1 stride 2), as its
    first block of a stage: the stem's output feeds two convs."""
    g = G([1, 8, 14, 14])
    a = g.op("Relu", [g.conv("x", 8, 16)])
    b = g.op("Relu", [g.conv(a, 16, 8, k=1)])
    b = g.op("Relu", [g.conv(b, 8, 8, stride=2)])
    b = g.conv(b, 8, 32, k=1)
    d = g.conv(a, 16, 32, k=1, stride=2, bias=False)
    return g, g.model(g.op("Relu", [g.op("Add", [b, d])])), 2


def conv_maxpool_conv():
    """ResNet's stem: MaxPool stays NCHW, a transpose each side of it."""
    g = G([1, 4, 16, 16])
    a = g.op("Relu", [g.conv("x", 4, 8, k=7, stride=2, pad=3)])
    p = g.op("MaxPool", [a], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    return g, g.model(g.conv(p, 8, 8)), 4


def conv_avgpool_conv():
    """Pools between convs (AveragePool: uneven pads, ceil_mode,
    count_include_pad 0; a MaxPool with dilations and SAME_UPPER): each
    between two transposes."""
    g = G([1, 4, 11, 11])
    a = g.conv("x", 4, 6)
    p = g.op("AveragePool", [a], kernel_shape=[3, 2], strides=[2, 2], pads=[0, 1, 1, 0],
             ceil_mode=1, count_include_pad=0)
    p = g.op("MaxPool", [g.conv(p, 6, 6)], kernel_shape=[2, 2], dilations=[2, 1],
             auto_pad="SAME_UPPER")
    return g, g.model(g.conv(p, 6, 5)), 6


def gap_head():
    """GlobalAveragePool -> ReduceMean over H, W of the NHWC value, its
    [N, 1, 1, C] result transposed for the Flatten + Gemm."""
    g = G([2, 6, 9, 9])
    a = g.op("Relu", [g.conv("x", 6, 16)])
    f = g.op("Flatten", [g.op("GlobalAveragePool", [a])])
    w = g.const(g.rng.standard_normal([16, 5]) * 0.3)
    return g, g.model(g.op("Gemm", [f, w])), 2


def broadcast_constants():
    """Constants of every broadcasting shape between two convs: [C, 1, 1]
    (per channel), [W] (rank 1: broadcast over W, not the channels),
    [1, C, H, 1], a scalar, and the constant first (Sub(c, x), Div)."""
    g = G([1, 4, 6, 7])
    a = g.conv("x", 4, 5)
    a = g.op("Add", [a, g.const(g.rng.standard_normal([5, 1, 1]))])
    a = g.op("Mul", [a, g.const(g.rng.standard_normal([7]))])
    a = g.op("Sub", [g.const(g.rng.standard_normal([1, 5, 6, 1])), a])
    a = g.op("Max", [a, g.const(np.float32(-0.5))])
    a = g.op("Div", [a, g.const(1.5 + g.rng.random([5, 6, 7]))])
    a = g.op("LeakyRelu", [a], alpha=0.1)
    a = g.op("Clip", [a, g.const(np.float32(-1.0)), g.const(np.float32(2.0))])
    return g, g.model(g.conv(a, 5, 3)), 2


GRAPHS = {f.__name__: f for f in (conv_relu_conv, basic_block, bottleneck, conv_maxpool_conv,
                                  conv_avgpool_conv, gap_head, broadcast_constants)}


def rewritten(model, bf16=True, amx=True):
    """(rewrite counts, op name -> count) after optimize_onnx on ``model``
    marked as the compiler marks it."""
    module = import_model(model)
    to_onnx_ir(module)
    if amx:
        with module.context:
            module.operation.attributes[AMX_BF16_ATTR] = ir.UnitAttr.get()
    if bf16:
        mark(module, "bf16")
    counts = optimize_onnx(module)
    ops = {}
    for op in walk_ops(module, is_onnx_op):
        ops[op.name] = ops.get(op.name, 0) + 1
    return counts, ops


def _transposes(ops):
    return sum(n for k, n in ops.items() if k.startswith("onnx.transpose"))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_transposes_left(name):
    g, model, want = GRAPHS[name]()
    convs = sum(n.op_type == "Conv" for n in model.graph.node)
    counts, ops = rewritten(model)
    assert ops.get("com_microsoft.nhwc_conv", 0) == convs, ops
    assert not any(k.startswith("onnx.conv") for k in ops), ops
    assert _transposes(ops) == want, ops
    if name == "gap_head":
        assert any(k.startswith("onnx.reduce_mean") for k in ops), ops
    # nothing without bf16 or without AMX
    for bf16, amx in ((False, True), (True, False)):
        counts, ops = rewritten(model, bf16, amx)
        assert counts["channels-last-convs"] == 0 and _transposes(ops) == 0, ops


def _rounded(model):
    """``model`` with inputs 0 and 1 of every Conv / Gemm rounded to bf16."""
    return rounded_model(model, ("Conv", "Gemm"))


@needs_amx
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bf16_channels_last_numerics(name, tmp_path):
    g, model, _ = GRAPHS[name]()
    so = onnx_mlir_py.compile(model, tmp_path / "m.so", opt_level=3, precision="bf16")
    mlir = onnx_mlir_py.compile(model, tmp_path / "m.mlir", opt_level=3, precision="bf16",
                                emit="EmitMLIR")
    assert "linalg.conv_2d_nhwc_fhwc" in open(mlir).read()     # the rewrite ran
    sess = ExecutionSession(str(so))
    exposed, names = expose_values(model)
    for seed in (0, 1):
        x = np.random.default_rng(seed).standard_normal(g.x_shape).astype(np.float32)
        got = sess.run([x])[0]
        values = dict(zip(names, ReferenceEvaluator(exposed).run(None, {"x": x})))
        f32 = values["y"]
        scale = float(np.abs(f32).max())
        err = float(np.abs(got - f32).max()) / scale
        assert 0 < err <= 2.0 ** -8 * math.sqrt(g.kmax), err
        # the same roundings as the NCHW bf16 model (f32 sums in another order)
        ref = ReferenceEvaluator(_rounded(model)).run(None, {"x": x})[0]
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * scale)
        try:
            e = bounds(model, {"x": x}, values)["y"]
        except Unbounded:       # pools: no per-element oracle
            continue
        assert compare(got, f32, e) is None, compare(got, f32, e)


@pytest.mark.parametrize("mcpu, precision, opt, nhwc", [
    (None, "bf16", 3, HOST.amx_bf16),   # the build machine (AMX: the rewrite runs)
    ("znver4", "bf16", 3, False),        # Zen 4: AVX512-BF16, no AMX
    ("sapphirerapids", "fp32", 3, False),
    ("sapphirerapids", "bf16", 2, False),   # the attribute is an -O3 target's
    ("sapphirerapids", "bf16", 3, True),
])
def test_only_bf16_on_amx(mcpu, precision, opt, nhwc, tmp_path):
    _, model, _ = conv_relu_conv()
    out = onnx_mlir_py.compile(model, tmp_path / "m.mlir", opt_level=opt, precision=precision,
                               mcpu=mcpu, emit="EmitMLIR")
    text = open(out).read()
    assert ("linalg.conv_2d_nhwc_fhwc" in text) == nhwc
    assert ("linalg.conv_2d_nchw_fchw" in text) == (not nhwc)
