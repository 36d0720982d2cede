"""-O3 convs on the packed matmul kernel whose accumulators start from the
bias (or zero) in registers instead of from an output-sized init tensor
(passes/optimize/matmul.py ``matmul_init``, ``NO_EPILOGUE``), against
onnxruntime at 1 and 2 threads: with and without a bias, alone or with a
residual Add on either side and ReLU, an Add whose other operand is
broadcast (not an epilogue tensor), rows (channels) and columns (pixels)
that are not whole blocks, a strided and a 3x3 im2col, and a dynamic batch
at two run-time sizes."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import assert_match, reference


def conv_model(c: int, f: int, hw: int, k: int = 1, stride: int = 1, bias: bool = True,
               add: str | None = None, relu: bool = True, batch=1):
    """Conv(c -> f, k x k, pads k//2) on [batch, c, hw, hw], then ``add``:
    None, "left" (conv + r), "right" (r + conv), "bcast" (conv + a [1, f, 1,
    1] input), then ReLU."""
    rng = np.random.default_rng(c * 1000 + f + hw + k)
    inits = [nh.from_array((rng.standard_normal((f, c, k, k)) * 0.2).astype(np.float32), "W")]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(f).astype(np.float32), "B"))
    nodes = [h.make_node("Conv", ["x", "W"] + (["B"] if bias else []), ["c"],
                         pads=[k // 2] * 4, strides=[stride] * 2)]
    oh = (hw + 2 * (k // 2) - k) // stride + 1
    ins = [h.make_tensor_value_info("x", TP.FLOAT, [batch, c, hw, hw])]
    cur = "c"
    if add is not None:
        rshape = [1, f, 1, 1] if add == "bcast" else [batch, f, oh, oh]
        ins.append(h.make_tensor_value_info("r", TP.FLOAT, rshape))
        nodes.append(h.make_node("Add", ["r", cur] if add == "right" else [cur, "r"], ["a"]))
        cur = "a"
    if relu:
        nodes.append(h.make_node("Relu", [cur], ["y"]))
        cur = "y"
    outs = [h.make_tensor_value_info(cur, TP.FLOAT, [batch, f, oh, oh])]
    m = h.make_model(h.make_graph(nodes, "g", ins, outs, inits),
                     opset_imports=[h.make_opsetid("", 17)])
    return m, oh


def feeds_for(m, rng, batch: int):
    feeds = {}
    for i in m.graph.input:
        shp = [d.dim_value if d.dim_value else batch for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.standard_normal(shp).astype(np.float32)
    return feeds


def _session(m, d: str, threads: int):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
    return ExecutionSession(so, num_threads=threads)


CASES = [
    # (c, f, hw, k, stride, bias, add, relu)
    (64, 256, 32, 1, 1, True, None, False),      # bias only: added by the kernel's own epilogue
    (16, 20, 32, 1, 1, True, None, False),       # ... 20 channels: rows not whole blocks
    (64, 256, 28, 1, 1, True, None, False),      # 784 pixels (pixel-row form, unchanged)
    (64, 64, 32, 1, 1, True, "left", True),      # bias + residual + ReLU
    (64, 64, 32, 1, 1, True, "right", True),     # residual as the Add's first operand
    (64, 64, 32, 1, 1, True, "bcast", True),     # Add of a [1, F, 1, 1]: not the epilogue's tensor
    (64, 64, 32, 1, 1, False, "left", True),     # no bias: a zero init
    (64, 64, 32, 1, 1, False, None, False),      # no bias, no epilogue
    (16, 20, 40, 3, 1, True, None, True),        # packed im2col, 20 channels: rows not whole blocks
    (16, 4, 32, 3, 1, True, None, True),         # 4 filters: fewer rows than a block
    (16, 4, 32, 3, 1, True, "left", False),      # ... with a residual
    (32, 32, 64, 3, 2, True, "left", True),      # strided im2col + residual
    (16, 32, 20, 3, 1, True, None, True),        # 400 pixels (pixel-row form, unchanged)
    (16, 32, 20, 3, 1, True, "left", True),      # ... with a residual
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "c{}f{}hw{}k{}s{}{}{}{}".format(
    *c[:5], "b" if c[5] else "", c[6] or "", "r" if c[7] else ""))
def test_conv_init_matches_onnxruntime(case, threads):
    c, f, hw, k, stride, bias, add, relu = case
    m, _ = conv_model(c, f, hw, k, stride, bias, add, relu)
    feeds = feeds_for(m, np.random.default_rng(7), 1)
    with tempfile.TemporaryDirectory() as d:
        got = _session(m, d, threads).run([feeds[i.name] for i in m.graph.input])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("add", [None, "left"])
def test_conv_init_dynamic_batch(add):
    """A dynamic batch (the batch-1 kernel per image), at two run-time sizes."""
    m, _ = conv_model(64, 64, 16, 1, 1, True, add, True, batch="n")
    with tempfile.TemporaryDirectory() as d:
        sess = _session(m, d, 1)
        for n in (1, 3):
            feeds = feeds_for(m, np.random.default_rng(n), n)
            got = sess.run([feeds[i.name] for i in m.graph.input])
            assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)
