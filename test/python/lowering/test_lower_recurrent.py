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


# -- every input dim dynamic (W/R too): sizes follow from hidden_size and
# direction; batch and sequence length vary at run time ------------------------
def _dyn_model(op, dirs, inputs, outputs, **attrs):
    from dynamic_util import model
    from onnx import TensorProto as T
    names = {"x": 3, "w": 3, "r": 3, "b": 2, "sl": 1, "h0": 3, "c0": 3, "p": 2}
    ins = [(n, T.INT32 if n == "sl" else T.FLOAT, [f"{n}{k}" for k in range(names[n])])
           for n in inputs if n]
    node = N(op, list(inputs), list(outputs), name="rec", hidden_size=H,
             direction="bidirectional" if dirs == 2 else "forward", **attrs)
    return model([node], ins, [(o, T.FLOAT, None) for o in outputs if o])


def _dyn_feeds(op, dirs, s, bt, i, seq_lens=False, h0=False, c0=False, peep=False):
    g = GATES[op]
    f = {"x": f32(s, bt, i), "w": f32(dirs, g * H, i), "r": f32(dirs, g * H, H),
         "b": f32(dirs, 2 * g * H)}
    if seq_lens:
        f["sl"] = R.integers(1, s + 1, bt).astype(np.int32)
    if h0:
        f["h0"] = f32(dirs, bt, H)
    if c0:
        f["c0"] = f32(dirs, bt, H)
    if peep:
        f["p"] = f32(dirs, 3 * H)
    return f


@pytest.mark.parametrize("op,dirs", [("RNN", 1), ("GRU", 2), ("LSTM", 1), ("LSTM", 2)])
def test_dynamic_weights_batch_and_sequence(tmp_path, op, dirs):
    from dynamic_util import check_shapes
    lstm = op == "LSTM"
    ins = ["x", "w", "r", "b", "", "h0"] + (["c0", "p"] if lstm else [])
    outs = ["y", "yh"] + (["yc"] if lstm else [])
    m = _dyn_model(op, dirs, ins, outs)
    kw = dict(h0=True, c0=lstm, peep=lstm)
    check_shapes(tmp_path, m, [_dyn_feeds(op, dirs, 4, 3, 5, **kw),
                               _dyn_feeds(op, dirs, 2, 1, 5, **kw),
                               _dyn_feeds(op, dirs, 6, 2, 3, **kw)],   # another input size
                 rtol=1e-4, atol=1e-5, engine="onnxruntime")


def test_dynamic_weights_with_sequence_lens(tmp_path):
    from dynamic_util import check_shapes
    m = _dyn_model("GRU", 1, ["x", "w", "r", "b", "sl"], ["y", "yh"], linear_before_reset=1)
    check_shapes(tmp_path, m, [_dyn_feeds("GRU", 1, 5, 3, 4, seq_lens=True),
                               _dyn_feeds("GRU", 1, 3, 2, 4, seq_lens=True)],
                 rtol=1e-4, atol=1e-5, engine="onnxruntime")


def test_dynamic_weights_are_checked(tmp_path):
    from dynamic_util import check_rejects
    m = _dyn_model("LSTM", 1, ["x", "w", "r", "b"], ["y"])
    good = _dyn_feeds("LSTM", 1, 3, 2, 5)
    bad_w = dict(good, w=f32(1, 4 * H + 1, 5))          # not 4 * hidden_size rows
    bad_i = dict(good, w=f32(1, 4 * H, 4))              # input size 4, X has 5
    bad_r = dict(good, r=f32(1, 4 * H, H + 1))
    bad_b = dict(good, b=f32(2, 8 * H))                 # two directions
    check_rejects(tmp_path, m, [bad_w, bad_i, bad_r, bad_b],
                  r"node 'rec' \(LSTM\): input '(W|R|B)' has dim")


def test_dynamic_weights_need_hidden_size(tmp_path):
    import onnx_mlir_py
    from dynamic_util import model
    from onnx import TensorProto as T
    from onnx_mlir_py.errors import VerificationError
    m = model([N("RNN", ["x", "w", "r"], ["y"], name="rec")],
              [(n, T.FLOAT, [f"{n}{k}" for k in range(3)]) for n in "xwr"],
              [("y", T.FLOAT, ["s", 1, "b", "h"])])
    with pytest.raises(VerificationError, match=r"node 'rec' \(RNN\): hidden_size is not given"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


# -- a row of sequence length 0: onnxruntime's Y_h (Y_c) of that row is 0, not
# initial_h (initial_c), and its Y is 0 at every step ------------------------------
ZERO_LENS, ZH = [2, 0, 3], 4          # batch 3 (row 1 empty), hidden 4, 3 steps


def _zero_len_model(op):
    """One node per direction, each with and without initial states (GRU:
    linear_before_reset 1 with them, 0 without), on one X and sequence_lens."""
    from onnx import TensorProto as T
    from onnx import numpy_helper as nh
    g, lstm = GATES[op], op == "LSTM"
    s, bt = max(ZERO_LENS), len(ZERO_LENS)
    feeds = {"x": f32(s, bt, I), "sl": np.array(ZERO_LENS, np.int32)}
    nodes, inits, outs = [], [], []
    for direction, d in DIRS.items():
        for states in (False, True):
            k = len(nodes)
            names = ["x", f"w{k}", f"r{k}", f"b{k}", "sl"]
            for a, shape in ((f"w{k}", (d, g * ZH, I)), (f"r{k}", (d, g * ZH, ZH)),
                             (f"b{k}", (d, 2 * g * ZH))):
                inits.append(nh.from_array(f32(*shape), a))
            if states:
                names += [f"h{k}"] + ([f"c{k}"] if lstm else [])
                for n in names[5:]:
                    feeds[n] = f32(d, bt, ZH, scale=1.0)
            o = [f"y{k}", f"yh{k}"] + ([f"yc{k}"] if lstm else [])
            attrs = {"linear_before_reset": int(states)} if op == "GRU" else {}
            nodes.append(N(op, names, o, hidden_size=ZH, direction=direction, **attrs))
            outs += o
    ins = [helper.make_tensor_value_info(n, T.INT32 if n == "sl" else T.FLOAT, v.shape)
           for n, v in feeds.items()]
    graph = helper.make_graph(nodes, "g", ins,
                              [helper.make_tensor_value_info(o, T.FLOAT, None) for o in outs],
                              initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    m.ir_version = 10
    return m, feeds, outs


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_zero_length_rows(tmp_path, op, opt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    m, feeds, outs = _zero_len_model(op)
    want = reference(m, feeds, "onnxruntime")
    for name, w in zip(outs, want):       # what onnxruntime gives the empty row
        assert not np.any(w[..., 1, :]), name
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt))
    for threads in (1, 2) if opt == 3 else (1,):  # 2: bidirectional directions in parallel
        sess.set_num_threads(threads)
        got = sess.run([feeds[spec.name] for spec in sess.input_specs])
        for name, g_, w in zip(outs, got, want):
            np.testing.assert_allclose(g_, w, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{name} at {threads} threads")
