"""A small model zoo built with ``onnx.helper`` and seeded random weights.

Every model is opset 17, IR version 10 (loadable by onnxruntime), with one
input named ``input`` and one output named ``output``:

    mnist_cnn(batch=1)        conv5x5/relu/maxpool x2 + Reshape + MatMul
    mlp(batch=64)             784-512-512-10 Gemm + Relu
    resnet18(batch=1)         ResNet-18 at 224x224, BatchNormalization nodes kept
    mobilenetv2(batch=1)      MobileNetV2 (BN folded into conv bias), Clip(0,6)
    mobilenetv3(batch=1)      MobileNetV3-Small: HardSwish, squeeze-excite (HardSigmoid)
    encoder_layer(d, heads, seq, batch, layers)
                              transformer encoder as exporters write it
    bert_layer(seq, batch, layers)  encoder_layer(d=768, heads=12)
``batch='N'`` (any string) makes the batch dim symbolic;
``with_symbolic_dims(model, {0: "N", 1: "S"})`` makes dims of every graph
input and output symbolic (a dynamic-batch/sequence copy of a static model).
``random_inputs(model, batch=..., seed=...)`` makes a feed dict.
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 10


class _Graph:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}_{self._n}"

    def init(self, base: str, arr: np.ndarray) -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.array(arr, order="C"), n))
        return n

    def weight(self, base: str, shape, fan_in: int, gain: float = 2.0) -> str:
        std = math.sqrt(gain / max(fan_in, 1))
        return self.init(base, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def small(self, base: str, shape, scale: float = 0.1) -> str:
        return self.init(base, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def i64(self, base: str, values) -> str:
        return self.init(base, np.asarray(values, dtype=np.int64))

    def f32(self, base: str, values) -> str:
        return self.init(base, np.asarray(values, dtype=np.float32))

    def node(self, op: str, inputs: list, n_out: int = 1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name: str, in_shape: list, out_shape: list) -> onnx.ModelProto:
        # rename the last node's output to "output"
        last = self.nodes[-1]
        old = last.output[0]
        for n in self.nodes:
            for i, x in enumerate(n.input):
                if x == old:
                    n.input[i] = "output"
        last.output[0] = "output"
        g = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, in_shape)],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, out_shape)],
            initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="onnx_mlir_py.testing")
        m.ir_version = IR_VERSION
        onnx.checker.check_model(m)
        return m

    # -- layers ------------------------------------------------------------------
    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0,
             group: int = 1, bias: bool = True) -> str:
        w = self.weight("W", (cout, cin // group, k, k), cin // group * k * k)
        ins = [x, w] + ([self.small("B", (cout,))] if bias else [])
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group, dilations=[1, 1])

    def bn(self, x: str, c: int) -> str:
        r = self.rng
        scale = self.init("gamma", (1.0 + 0.1 * r.standard_normal(c)).astype(np.float32))
        bias = self.init("beta", (0.1 * r.standard_normal(c)).astype(np.float32))
        mean = self.init("mean", (0.1 * r.standard_normal(c)).astype(np.float32))
        var = self.init("var", (0.5 + r.random(c)).astype(np.float32))
        return self.node("BatchNormalization", [x, scale, bias, mean, var], epsilon=1e-5)

    def linear(self, x: str, din: int, dout: int) -> str:
        """MatMul + Add, the way exporters write nn.Linear on 3-D inputs."""
        w = self.weight("W", (din, dout), din, gain=1.0)
        y = self.node("MatMul", [x, w])
        return self.node("Add", [y, self.small("b", (dout,), 0.02)])


def _batch_dim(batch):
    return batch if isinstance(batch, str) else int(batch)


# -- CNNs --------------------------------------------------------------------------
def mnist_cnn(batch=1, seed: int = 0) -> onnx.ModelProto:
    """The ONNX-zoo MNIST topology: 1x28x28 -> 10 logits."""
    g = _Graph(seed)
    x = g.conv("input", 1, 8, 5, pad=2)
    x = g.node("Relu", [x])
    x = g.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = g.conv(x, 8, 16, 5, pad=2)
    x = g.node("Relu", [x])
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[3, 3])
    x = g.node("Reshape", [x, g.i64("shape", [-1, 256])])
    x = g.node("MatMul", [x, g.weight("W", (256, 10), 256, 1.0)])
    g.node("Add", [x, g.small("b", (1, 10))])
    b = _batch_dim(batch)
    return g.model("mnist_cnn", [b, 1, 28, 28], [b, 10])


def mlp(batch=64, seed: int = 0, sizes=(784, 512, 512, 10)) -> onnx.ModelProto:
    g = _Graph(seed)
    x = "input"
    for i, (a, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        x = g.node("Gemm", [x, g.weight("W", (o, a), a), g.small("b", (o,))], transB=1)
        if i < len(sizes) - 2:
            x = g.node("Relu", [x])
    b = _batch_dim(batch)
    return g.model("mlp", [b, sizes[0]], [b, sizes[-1]])


def resnet18(batch=1, seed: int = 0, num_classes: int = 1000, size: int = 224
             ) -> onnx.ModelProto:
    g = _Graph(seed)
    x = g.node("Relu", [g.bn(g.conv("input", 3, 64, 7, 2, 3, bias=False), 64)])
    x = g.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, cout in enumerate((64, 128, 256, 512)):
        for blk in range(2):
            stride = 2 if (stage > 0 and blk == 0) else 1
            y = g.node("Relu", [g.bn(g.conv(x, cin, cout, 3, stride, 1, bias=False), cout)])
            y = g.bn(g.conv(y, cout, cout, 3, 1, 1, bias=False), cout)
            if stride != 1 or cin != cout:
                x = g.bn(g.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
            x = g.node("Relu", [g.node("Add", [y, x])])
            cin = cout
    x = g.node("GlobalAveragePool", [x])
    x = g.node("Flatten", [x], axis=1)
    # the random BN statistics do not normalise the activations (they grow to
    # O(100)): a small classifier keeps the logits O(1)
    g.node("Gemm", [x, g.weight("W", (num_classes, 512), 512, 1e-4),
                    g.small("b", (num_classes,))], transB=1)
    b = _batch_dim(batch)
    return g.model("resnet18", [b, 3, size, size], [b, num_classes])


_MBV2 = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
         (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenetv2(batch=1, seed: int = 0, num_classes: int = 1000, size: int = 224
                ) -> onnx.ModelProto:
    """MobileNetV2 as torch.onnx.export writes it (BN folded into conv bias)."""
    g = _Graph(seed)
    lo, hi = g.f32("zero", 0.0), g.f32("six", 6.0)

    def relu6(v):
        return g.node("Clip", [v, lo, hi])
    x = relu6(g.conv("input", 3, 32, 3, 2, 1))
    cin = 32
    for t, c, n, s in _MBV2:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            y = x
            if t != 1:
                y = relu6(g.conv(y, cin, hid, 1))
            y = relu6(g.conv(y, hid, hid, 3, stride, 1, group=hid))
            y = g.conv(y, hid, c, 1)
            x = g.node("Add", [x, y]) if (stride == 1 and cin == c) else y
            cin = c
    x = relu6(g.conv(x, cin, 1280, 1))
    x = g.node("GlobalAveragePool", [x])
    x = g.node("Flatten", [x], axis=1)
    g.node("Gemm", [x, g.weight("W", (num_classes, 1280), 1280, 1.0),
                    g.small("b", (num_classes,))], transB=1)
    b = _batch_dim(batch)
    return g.model("mobilenetv2", [b, 3, size, size], [b, num_classes])


# MobileNetV3-Small: (kernel, expansion, out, squeeze-excite, HardSwish, stride)
_MBV3_SMALL = [(3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2),
               (3, 88, 24, False, False, 1), (5, 96, 40, True, True, 2),
               (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
               (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1),
               (5, 288, 96, True, True, 2), (5, 576, 96, True, True, 1),
               (5, 576, 96, True, True, 1)]


def mobilenetv3(batch=1, seed: int = 0, num_classes: int = 1000, size: int = 224
                ) -> onnx.ModelProto:
    """MobileNetV3-Small as torch.onnx.export writes it (BN folded):
    HardSwish, squeeze-excite blocks (GlobalAveragePool, 1x1 convs, ReLU,
    HardSigmoid, Mul)."""
    g = _Graph(seed)

    def act(v, hs):
        return g.node("HardSwish", [v]) if hs else g.node("Relu", [v])
    x = act(g.conv("input", 3, 16, 3, 2, 1), True)
    cin = 16
    for k, exp, c, se, hs, s in _MBV3_SMALL:
        y = x if exp == cin else act(g.conv(x, cin, exp, 1), hs)
        y = act(g.conv(y, exp, exp, k, s, k // 2, group=exp), hs)
        if se:
            sq = max(8, (exp // 4 + 4) // 8 * 8)
            w = g.node("GlobalAveragePool", [y])
            w = g.node("Relu", [g.conv(w, exp, sq, 1)])
            w = g.node("HardSigmoid", [g.conv(w, sq, exp, 1)], alpha=1.0 / 6, beta=0.5)
            y = g.node("Mul", [y, w])
        y = g.conv(y, exp, c, 1)
        x = g.node("Add", [x, y]) if (s == 1 and cin == c) else y
        cin = c
    x = act(g.conv(x, cin, 576, 1), True)
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])], axis=1)
    x = g.node("HardSwish", [g.node("Gemm", [x, g.weight("W", (1024, 576), 576, 1.0),
                                               g.small("b", (1024,))], transB=1)])
    g.node("Gemm", [x, g.weight("W", (num_classes, 1024), 1024, 1.0),
                    g.small("b", (num_classes,))], transB=1)
    b = _batch_dim(batch)
    return g.model("mobilenetv3", [b, 3, size, size], [b, num_classes])


# -- transformer -------------------------------------------------------------------
def _layer_norm(g: _Graph, x: str, d: int) -> str:
    scale = g.init("ln_g", (1.0 + 0.1 * g.rng.standard_normal(d)).astype(np.float32))
    bias = g.small("ln_b", (d,), 0.05)
    return g.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=1e-5)


def _gelu_erf(g: _Graph, x: str) -> str:
    """x * 0.5 * (1 + erf(x / sqrt(2))), as exporters write Gelu."""
    e = g.node("Erf", [g.node("Div", [x, g.f32("sqrt2", math.sqrt(2.0))])])
    e = g.node("Add", [e, g.f32("one", 1.0)])
    return g.node("Mul", [g.node("Mul", [x, e]), g.f32("half", 0.5)])


def _dims(g: _Graph, x: str) -> tuple[str, str]:
    """Shape -> Gather -> Unsqueeze: batch and seq as 1-D int64 tensors."""
    s = g.node("Shape", [x])
    out = []
    for i in (0, 1):
        d = g.node("Gather", [s, g.i64("idx", i)], axis=0)
        out.append(g.node("Unsqueeze", [d, g.i64("axes", [0])]))
    return out[0], out[1]


def _encoder(g: _Graph, x: str, d: int, heads: int, ff: int) -> str:
    dh = d // heads
    bsz, seq = _dims(g, x)
    heads_shape = g.node("Concat", [bsz, seq, g.i64("h", [heads]), g.i64("dh", [dh])], axis=0)
    q, k, v = (g.linear(x, d, d) for _ in range(3))
    q = g.node("Transpose", [g.node("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])
    k = g.node("Transpose", [g.node("Reshape", [k, heads_shape])], perm=[0, 2, 3, 1])
    v = g.node("Transpose", [g.node("Reshape", [v, heads_shape])], perm=[0, 2, 1, 3])
    s = g.node("Div", [g.node("MatMul", [q, k]), g.f32("scale", math.sqrt(dh))])
    p = g.node("Softmax", [s], axis=-1)
    c = g.node("Transpose", [g.node("MatMul", [p, v])], perm=[0, 2, 1, 3])
    merged = g.node("Concat", [bsz, seq, g.i64("d", [d])], axis=0)
    c = g.node("Reshape", [c, merged])
    a = g.linear(c, d, d)
    x = _layer_norm(g, g.node("Add", [x, a]), d)
    h = _gelu_erf(g, g.linear(x, d, ff))
    h = g.linear(h, ff, d)
    return _layer_norm(g, g.node("Add", [x, h]), d)


def encoder_layer(d: int = 256, heads: int = 4, seq: int = 128, batch=1, layers: int = 1,
                  ff: int | None = None, seed: int = 0) -> onnx.ModelProto:
    """Post-LN transformer encoder layer(s); input/output [batch, seq, d]."""
    if d % heads:
        raise ValueError(f"d={d} is not a multiple of heads={heads}")
    g = _Graph(seed)
    x = "input"
    for _ in range(layers):
        x = _encoder(g, x, d, heads, ff or 4 * d)
    b = _batch_dim(batch)
    return g.model("encoder_layer", [b, seq, d], [b, seq, d])


def bert_layer(seq: int = 128, batch=1, layers: int = 1, seed: int = 0) -> onnx.ModelProto:
    """BERT-base encoder layer: d=768, 12 heads, FF 3072."""
    return encoder_layer(d=768, heads=12, seq=seq, batch=batch, layers=layers, seed=seed)


def with_symbolic_dims(model: onnx.ModelProto, names: dict[int, str]) -> onnx.ModelProto:
    """A copy of ``model`` whose graph inputs and outputs have the dims at
    the given axes replaced by ``dim_param`` names (axis -> name), the way
    exporters write dynamic axes. Inputs that are initializers are kept."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    init = {i.name for i in m.graph.initializer}
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.name in init:
            continue
        dims = vi.type.tensor_type.shape.dim
        for axis, name in names.items():
            if axis < len(dims):
                dims[axis].ClearField("dim_value")
                dims[axis].dim_param = name
    onnx.checker.check_model(m)
    return m


# -- inputs ------------------------------------------------------------------------
def random_inputs(model: onnx.ModelProto, batch: int = 1, seed: int = 0
                  ) -> dict[str, np.ndarray]:
    """Feeds for the graph inputs; symbolic dims take ``batch``."""
    rng = np.random.default_rng(seed)
    init = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        shape = [d.dim_value if d.HasField("dim_value") else batch
                 for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


ZOO = {"mnist_cnn": mnist_cnn, "mlp": mlp, "resnet18": resnet18,
       "mobilenetv2": mobilenetv2, "mobilenetv3": mobilenetv3, "encoder_layer": encoder_layer,
       "bert_layer": bert_layer}
