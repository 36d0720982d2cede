"""-O3 convs followed by SiLU (Sigmoid + Mul) or a Sigmoid: the packed
im2col convs run them as their epilogue (passes/optimize/epilogue.py, exp as
math_approx's polynomial). Against onnxruntime at 1 and 2 threads: 1x1 and
3x3 convs, with and without a bias, both Mul operand orders, a conv output
with a third user (not fused, still right), a SiLU output that a Concat
reads (kept separate: written into the concat's buffer), a dynamic batch
(2 and 3 images); and, for convs without a bias, the fused library's
outputs bit-identical to the unfused one's (the same exp approximation as
the standalone Sigmoid kernel; with a bias the accumulators start from it,
bias + sum, so the conv's own rounding differs, as for every epilogue)."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import assert_match, reference
from test_o3_conv_epilogue import _chain_of as chain_after_conv
from test_o3_conv_epilogue import _lowered


def silu_model(c: int, f: int, hw: int, k: int, bias: bool = True, order: str = "x*s",
               act: str = "silu", third: bool = False, concat: bool = False, batch=1):
    rng = np.random.default_rng(c * 100 + f + k)
    inits = [nh.from_array((rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k)).astype(np.float32), "W")]
    ins = ["x", "W"]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(f).astype(np.float32), "B"))
        ins.append("B")
    nodes = [h.make_node("Conv", ins, ["c"], pads=[k // 2] * 4)]
    if act == "sigmoid":
        nodes.append(h.make_node("Sigmoid", ["c"], ["y"]))
    else:
        nodes += [h.make_node("Sigmoid", ["c"], ["s"]),
                  h.make_node("Mul", ["c", "s"] if order == "x*s" else ["s", "c"], ["y"])]
    outs = ["y"]
    if third:
        nodes.append(h.make_node("Relu", ["c"], ["r"]))
        outs.append("r")
    if concat:
        nodes.append(h.make_node("Concat", ["y", "x"], ["cat"], axis=1))
        outs = ["cat"]
    x_info = h.make_tensor_value_info("x", TP.FLOAT, [batch, c, hw, hw])
    graph = h.make_graph(nodes, "g", [x_info], [h.make_tensor_value_info(o, TP.FLOAT, None) for o in outs],
                         inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def _feeds(m, n, seed=0):
    c, hw = (m.graph.input[0].type.tensor_type.shape.dim[i].dim_value for i in (1, 2))
    return {"x": (np.random.default_rng(seed).standard_normal((n, c, hw, hw)) * 3).astype(np.float32)}


def _run(m, feed_list, threads):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        sess = ExecutionSession(so, num_threads=threads)
        return [sess.run([f["x"]]) for f in feed_list]


def _check(m, threads, batches=(1,)):
    feeds = [_feeds(m, n, seed=n) for n in batches]
    for got, f in zip(_run(m, feeds, threads), feeds):
        assert_match(got, reference(m, f, "onnxruntime"), rtol=1e-5, atol=1e-5)


CASES = [
    # (c, f, hw, k, keywords)
    (64, 64, 32, 1, {}),                          # 1x1, input in place
    (64, 64, 32, 1, dict(order="s*x")),           # Mul(sigmoid, x)
    (64, 64, 32, 1, dict(bias=False)),
    (32, 64, 40, 3, {}),                          # packed im2col 3x3
    (32, 64, 40, 3, dict(bias=False, order="s*x")),
    (128, 128, 20, 1, {}),                        # 400 pixels
    (64, 128, 7, 1, {}),                          # pixel rows: on the transposed blocks
    (128, 128, 28, 3, dict(order="s*x")),         # pixel rows, 3x3
    (64, 64, 32, 1, dict(act="sigmoid")),         # a plain Sigmoid
    (64, 64, 32, 1, dict(third=True)),            # the conv also read by a Relu
    (64, 64, 32, 1, dict(concat=True)),           # the SiLU written into a Concat
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c[:4])) + "-" +
                         "-".join(f"{k}={v}" for k, v in c[4].items()))
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_silu_matches_onnxruntime(case, threads):
    c, f, hw, k, kw = case
    _check(silu_model(c, f, hw, k, **kw), threads)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv_silu_dynamic_batch(threads):
    _check(silu_model(64, 64, 16, 1, batch="N"), threads, batches=(2, 3))


def _chain_of(m):
    """The epilogue ops the matcher finds after the conv (None: refused)."""
    module = _lowered(m)
    with module.context:
        epi = chain_after_conv(module)
        return None if epi is None else [o[0] for o in epi.ops]


@pytest.mark.parametrize("kw", [{}, dict(order="s*x"), dict(act="sigmoid")], ids=["x*s", "s*x", "sigmoid"])
def test_silu_is_an_epilogue(kw):
    ops = _chain_of(silu_model(64, 64, 32, 1, **kw))
    assert ops is not None and "math.exp" in ops


@pytest.mark.parametrize("kw", [dict(third=True), dict(concat=True)], ids=["third-user", "into-concat"])
def test_silu_not_an_epilogue(kw):
    assert _chain_of(silu_model(64, 64, 32, 1, **kw)) is None


@pytest.mark.parametrize("case", [(64, 64, 32, 1, dict(bias=False)), (32, 64, 40, 3, dict(bias=False, order="s*x"))],
                         ids=["1x1", "3x3"])
def test_fused_silu_bit_identical_to_separate(case, monkeypatch):
    """The epilogue's exp is math_approx's: the fused library computes the
    same floats as the conv + standalone Sigmoid kernel (no bias: see the
    module docstring)."""
    from onnx_mlir_py.passes.optimize import epilogue
    c, f, hw, k, kw = case
    m = silu_model(c, f, hw, k, **kw)
    feeds = [_feeds(m, 1)]
    fused = _run(m, feeds, 1)[0]
    monkeypatch.setattr(epilogue, "ENABLED", False)
    separate = _run(m, feeds, 1)[0]
    for a, b in zip(fused, separate):
        assert np.array_equal(a, b)
