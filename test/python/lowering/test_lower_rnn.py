"""RNN / GRU / LSTM lowering vs onnxruntime (the ONNX reference ignores
sequence_lens, clip and most activations) and vs onnx.reference for layout 1
(onnxruntime has no batch-major layout)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from engine import run_model
from lowering_util import make_model
from onnx_mlir_py.testing.check import assert_match, check_compiled, reference

R = np.random.default_rng(5)
N = helper.make_node
S, B, I, H = 4, 3, 5, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def f32(*shape, scale=0.5):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def feeds_for(op, dirs=1, bias=True, seq_lens=None, h0=False, c0=False, peep=False,
              layout=0):
    g = GATES[op]
    x = f32(S, B, I) if layout == 0 else f32(B, S, I)
    feeds = {"x": x, "w": f32(dirs, g * H, I), "r": f32(dirs, g * H, H)}
    names = ["x", "w", "r", "", "", ""] + (["", ""] if op == "LSTM" else [])
    if bias:
        feeds["b"] = f32(dirs, 2 * g * H)
        names[3] = "b"
    if seq_lens is not None:
        feeds["sl"] = np.array(seq_lens, np.int32)
        names[4] = "sl"
    state = (dirs, B, H) if layout == 0 else (B, dirs, H)
    if h0:
        feeds["h0"] = f32(*state)
        names[5] = "h0"
    if c0:
        feeds["c0"] = f32(*state)
        names[6] = "c0"
    if peep:
        feeds["p"] = f32(dirs, 3 * H)
        names[7] = "p"
    while names[-1] == "":
        names.pop()
    return feeds, names


def run(op, feeds, names, outs=("y", "yh"), opset=22, engine="onnxruntime", dyn=(),
        **attrs):
    outs = list(outs)
    node = N(op, names, outs, hidden_size=H, **attrs)
    m = make_model([node], feeds, [o for o in outs if o], opset=opset, dyn_inputs=dyn)
    expected = reference(m, feeds, engine)
    got = run_model(m, feeds, expected)
    assert_match(got, expected, rtol=1e-4, atol=1e-5)


DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}


@pytest.mark.parametrize("direction", list(DIRS))
@pytest.mark.parametrize("opset", [7, 14, 22])
def test_rnn_directions(direction, opset):
    feeds, names = feeds_for("RNN", DIRS[direction], h0=True)
    run("RNN", feeds, names, opset=opset, direction=direction)


@pytest.mark.parametrize("direction", list(DIRS))
def test_rnn_seq_lens_activations_clip(direction):
    feeds, names = feeds_for("RNN", DIRS[direction], seq_lens=[4, 2, 1])
    acts = ["Relu", "LeakyRelu"] if direction == "bidirectional" else ["LeakyRelu"]
    alpha = [0.3]
    run("RNN", feeds, names, direction=direction, activations=acts, activation_alpha=alpha,
        clip=0.7)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", list(DIRS))
def test_gru(lbr, direction):
    feeds, names = feeds_for("GRU", DIRS[direction], h0=True)
    run("GRU", feeds, names, direction=direction, linear_before_reset=lbr)


@pytest.mark.parametrize("lbr", [0, 1])
@pytest.mark.parametrize("direction", ["reverse", "bidirectional"])
def test_gru_seq_lens(lbr, direction):
    feeds, names = feeds_for("GRU", DIRS[direction], seq_lens=[2, 4, 3], bias=lbr == 1)
    run("GRU", feeds, names, direction=direction, linear_before_reset=lbr)


@pytest.mark.parametrize("opset", [7, 14])
def test_gru_activations_no_bias(opset):
    feeds, names = feeds_for("GRU", bias=False)
    run("GRU", feeds, names, opset=opset, activations=["HardSigmoid", "Softsign"],
        activation_alpha=[0.25], activation_beta=[0.4])


@pytest.mark.parametrize("direction", list(DIRS))
@pytest.mark.parametrize("peep", [False, True])
def test_lstm(direction, peep):
    feeds, names = feeds_for("LSTM", DIRS[direction], h0=True, c0=True, peep=peep)
    run("LSTM", feeds, names, outs=("y", "yh", "yc"), direction=direction)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_seq_lens_clip(direction):
    feeds, names = feeds_for("LSTM", DIRS[direction], seq_lens=[1, 4, 3], peep=True)
    run("LSTM", feeds, names, outs=("y", "yh", "yc"), direction=direction, clip=0.5)


@pytest.mark.parametrize("outs,opset", [(("", "yh"), 14), (("", "", "yc"), 7), (("y",), 7)])
def test_lstm_output_subsets(outs, opset):
    feeds, names = feeds_for("LSTM")
    run("LSTM", feeds, names, outs=outs, opset=opset)


def test_lstm_input_forget_activations():
    feeds, names = feeds_for("LSTM", c0=True)
    run("LSTM", feeds, names, outs=("y", "yh", "yc"), input_forget=1,
        activations=["Sigmoid", "Elu", "Softplus"])


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_layout_1(op):
    feeds, names = feeds_for(op, h0=True, layout=1)
    outs = ("y", "yh", "yc") if op == "LSTM" else ("y", "yh")
    run(op, feeds, names, outs=outs, opset=14, engine="reference", layout=1)


def test_dynamic_sequence_length():
    feeds, names = feeds_for("LSTM", peep=True)
    run("LSTM", feeds, names, outs=("y",), dyn=("x",))


def test_lstm_full_compiler():
    feeds, names = feeds_for("LSTM", 2, seq_lens=[3, 4, 2], h0=True, c0=True)
    m = make_model([N("LSTM", names, ["y", "yh", "yc"], hidden_size=H,
                      direction="bidirectional")], feeds, ["y", "yh", "yc"], opset=22)
    got = check_compiled(m, feeds, rtol=1e-4, atol=1e-5, engine="onnxruntime")
    assert len(got) == 3
