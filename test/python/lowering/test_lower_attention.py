"""RotaryEmbedding (v23, compiled through its function body) against
onnx.reference: interleaved or not, full or partial rotary_embedding_dim,
3-D input with num_heads or 4-D, with position_ids (offsets into a longer
cache) or without (per-token caches); dynamic batch at two run-time sizes.
Issue 16 reported wrong offsets: none of these 16 configurations differs.
CausalConvWithState (v27, its own lowering: the function body needs static
shapes) against onnx.reference: with/without bias and past state, silu /
swish / none, k = 1, dynamic batch and length run at a prefill and a decode
length, fewer new positions than k - 1, fp16, and its two refusals."""
import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_shapes, model

from onnx import TensorProto as TP
from onnx_mlir_py.testing.check import assert_match, reference, run_compiled

R = np.random.default_rng(1)
S, H, D = 3, 2, 8


@pytest.mark.parametrize("interleaved,rdim,three_d,pos",
                         list(itertools.product([0, 1], [0, 4], [False, True], [True, False])))
def test_rotary_embedding(tmp_path, interleaved, rdim, three_d, pos):
    attrs = dict(interleaved=interleaved)
    if rdim:
        attrs["rotary_embedding_dim"] = rdim
    if three_d:
        attrs["num_heads"] = H
    half = (rdim or D) // 2
    xs = (lambda b: [b, S, H * D]) if three_d else (lambda b: [b, H, S, D])
    cs = (lambda b: [10, half]) if pos else (lambda b: [b, S, half])
    names = ["x", "cos", "sin"] + (["p"] if pos else [])
    inputs = [("x", T.FLOAT, ["b"] + xs(1)[1:]),
              ("cos", T.FLOAT, cs("b")), ("sin", T.FLOAT, cs("b"))]
    if pos:
        inputs.append(("p", T.INT64, ["b", S]))
    m = model([h.make_node("RotaryEmbedding", names, ["y"], **attrs)], inputs, opset=23)
    feeds = []
    for b in (2, 3):
        f = {"x": R.standard_normal(xs(b)).astype(np.float32),
             "cos": R.standard_normal(cs(b)).astype(np.float32),
             "sin": R.standard_normal(cs(b)).astype(np.float32)}
        if pos:
            f["p"] = R.integers(0, 10, (b, S)).astype(np.int64)
        feeds.append(f)
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-5)


# ---- CausalConvWithState (opset 27) ----------------------------------------

def _causal_model(c: int, k: int, bias: bool, past: bool, act: str, et=TP.FLOAT,
                  dynamic: bool = True):
    n_, l_ = ("n", "l") if dynamic else (2, 5)
    ins = [h.make_tensor_value_info("x", et, [n_, c, l_]),
           h.make_tensor_value_info("w", et, [c, 1, k])]
    names = ["x", "w", "b" if bias else "", "p" if past else ""]
    if bias:
        ins.append(h.make_tensor_value_info("b", et, [c]))
    if past:
        ins.append(h.make_tensor_value_info("p", et, [n_, c, k - 1]))
    while names and names[-1] == "":
        names.pop()
    node = h.make_node("CausalConvWithState", names, ["y", "s"], activation=act)
    g = h.make_graph([node], "g", ins, [h.make_tensor_value_info("y", et, None),
                                       h.make_tensor_value_info("s", et, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 27)], ir_version=13)


def _causal_feeds(m, n: int, length: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    np_t = {TP.FLOAT: np.float32, TP.FLOAT16: np.float16}
    feeds = {}
    for i in m.graph.input:
        dt = np_t[i.type.tensor_type.elem_type]
        dims = [d.dim_value if d.HasField("dim_value") else (n if d.dim_param == "n" else length)
                for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = rng.standard_normal(dims).astype(dt)
    return feeds


@pytest.mark.parametrize("k,bias,past,act", [(4, True, True, "silu"), (4, False, False, "none"),
                                             (3, True, False, "swish"), (1, True, True, "none")])
def test_causal_conv_with_state_two_lengths(k, bias, past, act, tmp_path):
    """One dynamic compile, run at a prefill length and at a decode step (1)."""
    from onnx_mlir_py.runtime import ExecutionSession
    import onnx_mlir_py
    m = _causal_model(6, k, bias, past, act)
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    sess = ExecutionSession(so)
    for n, length in ((2, 7), (1, 1)):
        feeds = _causal_feeds(m, n, length, seed=length)
        got = sess.run([feeds[i.name] for i in m.graph.input])
        assert_match(got, reference(m, feeds), rtol=1e-5, atol=1e-5)


def test_causal_conv_with_state_short_input(tmp_path):
    """Fewer new positions than k - 1: the state keeps part of the past."""
    m = _causal_model(3, 5, False, True, "none", dynamic=False)
    feeds = _causal_feeds(m, 2, 5)
    for opt in (0, 3):
        assert_match(run_compiled(m, feeds, opt), reference(m, feeds), rtol=1e-5, atol=1e-5)


def test_causal_conv_with_state_fp16():
    m = _causal_model(4, 3, True, True, "silu", et=TP.FLOAT16, dynamic=False)
    feeds = _causal_feeds(m, 2, 5)
    assert_match(run_compiled(m, feeds, 3), reference(m, feeds), rtol=2e-3, atol=2e-3)


def test_causal_conv_with_state_bad_state_length(tmp_path):
    """A past_state whose length is not k - 1 stops the call with the node's name."""
    from onnx_mlir_py.runtime import ExecutionSession
    import onnx_mlir_py
    m = _causal_model(3, 4, False, True, "none")
    m.graph.input[2].type.tensor_type.shape.dim[2].dim_param = "s"
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=0)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 3, 4)).astype(np.float32), rng.standard_normal((3, 1, 4)).astype(np.float32)
    p = rng.standard_normal((1, 3, 2)).astype(np.float32)
    with pytest.raises(Exception, match="CausalConvWithState.*past_state dim 2 is 2; it must be"):
        ExecutionSession(so).run([x, w, p])


def test_causal_conv_with_state_bad_activation():
    m = _causal_model(3, 4, False, False, "gelu", dynamic=False)
    with pytest.raises(Exception, match="activation must be one of none, silu, swish"):
        run_compiled(m, _causal_feeds(m, 1, 1), 0)
