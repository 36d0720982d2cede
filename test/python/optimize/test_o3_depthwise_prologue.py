"""-O3 depthwise kernel with the elementwise op before its zero pad fused
into the copy of the input plane (``kernel_fusion.prologue_producer``): the
MobileNet pattern 1x1 conv -> ReLU6 / HardSwish -> depthwise 3x3, compared
with onnxruntime, static and with a dynamic batch at two sizes.

HardSigmoid(0) = 0.5: a row whose width is not a whole number of vectors
checks that the padded border keeps its zeros (the lanes of the masked last
read past the row must not get the op applied)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from conv_cases import compare_with_ort

R = np.random.default_rng(5)
N = h.make_node


def _block(nodes, inits, tag, x, cin, cout, act, shared=False, **attrs):
    """x -> Conv 1x1 (+bias) -> act -> depthwise 3x3 (+bias) -> Clip(0, 6)."""
    inits += [nh.from_array(R.standard_normal((cout, cin, 1, 1)).astype(np.float32) * 0.5,
                            f"w1_{tag}"),
              nh.from_array(R.standard_normal(cout).astype(np.float32), f"b1_{tag}"),
              nh.from_array(R.standard_normal((cout, 1, 3, 3)).astype(np.float32) * 0.5,
                            f"w2_{tag}"),
              nh.from_array(R.standard_normal(cout).astype(np.float32), f"b2_{tag}")]
    nodes.append(N("Conv", [x, f"w1_{tag}", f"b1_{tag}"], [f"c1_{tag}"], kernel_shape=[1, 1]))
    if act == "clip":
        nodes.append(N("Clip", [f"c1_{tag}", "lo", "hi"], [f"a_{tag}"]))
    elif act == "hardswish":
        nodes.append(N("HardSwish", [f"c1_{tag}"], [f"a_{tag}"]))
    elif act == "hardsigmoid":
        nodes.append(N("HardSigmoid", [f"c1_{tag}"], [f"a_{tag}"], alpha=0.25))
    nodes.append(N("Conv", [f"a_{tag}", f"w2_{tag}", f"b2_{tag}"], [f"c2_{tag}"], group=cout,
                   kernel_shape=[3, 3], pads=[1, 1, 1, 1], **attrs))
    outs = [f"y_{tag}"]
    nodes.append(N("Clip", [f"c2_{tag}", "lo", "hi"], [f"y_{tag}"]))
    if shared:      # the activation has a second user: not fused, still right
        nodes.append(N("Relu", [f"a_{tag}"], [f"s_{tag}"]))
        outs.append(f"s_{tag}")
    return outs


CASES = [   # tag, (C in, H, W), C out, activation, second user, depthwise attrs
    ("clip", (8, 14, 14), 24, "clip", False, {}),
    ("clip_s2", (8, 15, 15), 16, "clip", False, dict(strides=[2, 2])),
    ("hswish", (6, 28, 28), 16, "hardswish", False, {}),
    ("hsig_w13", (4, 9, 13), 8, "hardsigmoid", False, {}),
    ("hsig_w20", (4, 7, 20), 8, "hardsigmoid", False, dict(strides=[2, 2])),
    ("shared", (4, 10, 10), 8, "clip", True, {}),
    ("threaded", (16, 56, 56), 96, "hardswish", False, {}),   # > 2^21 MACs: channel blocks
    # planes of 32 KiB and more: copied row by row (row_kernel.INTERLEAVE_MIN_PLANE)
    ("hsig_big", (2, 100, 101), 4, "hardsigmoid", False, {}),
    ("clip_big_s2", (2, 111, 112), 4, "clip", False, dict(strides=[2, 2])),
]


def _model(batch):
    nodes, inits, inputs, outputs = [], [], [], []
    inits += [nh.from_array(np.array(0.0, np.float32), "lo"),
              nh.from_array(np.array(6.0, np.float32), "hi")]
    for tag, (c, hh, ww), cout, act, shared, attrs in CASES:
        inputs.append(h.make_tensor_value_info(f"x_{tag}", T.FLOAT, [batch, c, hh, ww]))
        outputs += _block(nodes, inits, tag, f"x_{tag}", c, cout, act, shared, **attrs)
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info(o, T.FLOAT, None)
                                          for o in outputs], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), outputs


def _feeds(batch):
    return {f"x_{tag}": (R.standard_normal((batch, *shape)) * 2).astype(np.float32)
            for tag, shape, *_ in CASES}


def _check(tmp_path, model, outputs, batches, threads=(1, 2)):
    compare_with_ort(tmp_path, model, outputs, batches, threads, feeds=_feeds)


def test_prologue_static(tmp_path):
    model, outputs = _model(1)
    _check(tmp_path, model, outputs, [1])


def test_prologue_dynamic_batch(tmp_path):
    model, outputs = _model("N")
    _check(tmp_path, model, outputs, [1, 3])
