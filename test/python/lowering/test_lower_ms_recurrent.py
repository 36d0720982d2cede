"""com.microsoft DynamicQuantizeLSTM against onnxruntime, compiled once per
model at -O0 and -O3 and run at two shapes of the dynamic sequence and batch:
LSTMs quantized by onnxruntime.quantization.quantize_dynamic (per tensor and
per channel), and hand-built nodes: forward / reverse / bidirectional, int8
and uint8 weights (zero points 0, a per-direction uint8 zero point, a
constant per-column one), per-direction and per-column scales (W and R
differently), with and without B / sequence_lens / initial_h / initial_c / P,
clip, input_forget, activations, only some outputs (without Y onnxruntime
quantizes H_{t-1} over the carried states, with Y over Y's step t-1).
Refusals at compile time (verifier, lowering) and at run time.

The lowering reproduces onnxruntime's dynamic quantization of X and of
H_{t-1} (passes/onnx_to_linalg/ms_recurrent.py), so results agree to float
rounding; onnxruntime runs with one intra-op thread: with more it quantizes
slices of the batch separately (its result depends on its thread count).
The data is fixed (seeded): H comes out of different (equally accurate)
sigmoid / tanh code here and there, so a random H element that lands within
rounding of a quantization tie could round to the other step (an error of
about one step, (range of H) / 255 times a weight, in later outputs); 2 of
150 random cases of a similar size did in a numpy emulation, none of these.
An LSTM in f32 on the dequantized weights is 3e-3 to 7e-2 off.
"""
from __future__ import annotations

import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from dynamic_util import check_rejects, model
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession

ort = pytest.importorskip("onnxruntime")

R = np.random.default_rng(28)
MS = "com.microsoft"
OPT = pytest.mark.parametrize("opt", [0, 3])
I, H = 6, 8                               # input size, hidden size
DIRS = {"forward": 1, "reverse": 1, "bidirectional": 2}
SHAPES = [(5, 3), (2, 1)]                 # (seq, batch) at run time


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


def check(tmp_path, m, feed_sets, opt, atol=1e-5):
    """Compile ``m`` once; each feed dict's outputs match onnxruntime's (one
    intra-op thread) to ``atol`` (the float rounding of the gates)."""
    names = [i.name for i in m.graph.input
             if i.name not in {t.name for t in m.graph.initializer}]
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{opt}.so", opt_level=opt))
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    ref = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    outs = [o.name for o in m.graph.output]
    for feeds in feed_sets:
        want = ref.run(None, feeds)
        got = sess.run([feeds[n] for n in names])
        shapes = {k: v.shape for k, v in feeds.items()}
        for name, g, w in zip(outs, got, want):
            assert g.shape == w.shape, (name, shapes, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol, err_msg=f"{name} {shapes}")


def state_feeds(dirs, names, s, b, lens=None):
    """X, initial_h / initial_c and sequence_lens = lens(s, b) as ``names``
    has them; when the lengths end before X does, X's steps past them are
    larger (onnxruntime quantizes X over the first max(sequence_lens) steps)."""
    f = {"x": f32(s, b, I)}
    if "sl" in names and max(lens(s, b)) < s:
        f["x"][max(lens(s, b)):] *= 3
    if "h0" in names:
        f["h0"] = f32(dirs, b, H, scale=0.5)
    if "c0" in names:
        f["c0"] = f32(dirs, b, H, scale=0.5)
    if "sl" in names:
        f["sl"] = np.array(lens(s, b), np.int32)
    return f


# -- models written by quantize_dynamic ------------------------------------------------

@OPT
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantize_dynamic(tmp_path, opt, per_channel):
    """A float LSTM (B, sequence_lens, initial_h / c; bidirectional per channel,
    forward per tensor) through quantize_dynamic: one DynamicQuantizeLSTM
    with int8 weights stored [D, input, 4H] and scales [D] or [D, 4H]."""
    direction = "bidirectional" if per_channel else "forward"
    d = DIRS[direction]
    ins = ["x", "W", "R", "B", "sl", "h0", "c0"]
    g = h.make_graph(
        [h.make_node("LSTM", ins, ["y", "yh", "yc"], hidden_size=H, direction=direction)], "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["s", "b", I]),
         h.make_tensor_value_info("sl", T.INT32, ["b"]),
         h.make_tensor_value_info("h0", T.FLOAT, [d, "b", H]),
         h.make_tensor_value_info("c0", T.FLOAT, [d, "b", H])],
        [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("y", "yh", "yc")],
        initializer=[init("W", f32(d, 4 * H, I, scale=0.5)), init("R", f32(d, 4 * H, H, scale=0.5)),
                     init("B", f32(d, 8 * H, scale=0.5))])
    f = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    f.ir_version = 8
    onnx.save(f, tmp_path / "f.onnx")
    from onnxruntime.quantization import quantize_dynamic
    logging.disable(logging.WARNING)      # "consider pre-processing"
    try:
        quantize_dynamic(tmp_path / "f.onnx", tmp_path / "q.onnx", op_types_to_quantize=["LSTM"],
                         per_channel=per_channel)
    finally:
        logging.disable(logging.NOTSET)
    q = onnx.load(tmp_path / "q.onnx")
    assert [(n.op_type, n.domain) for n in q.graph.node] == [("DynamicQuantizeLSTM", MS)]
    inits = {t.name: nh.to_array(t) for t in q.graph.initializer}
    w = inits[q.graph.node[0].input[1]]
    assert w.dtype == np.int8 and w.shape == (d, I, 4 * H)
    assert inits[q.graph.node[0].input[8]].shape == ((d, 4 * H) if per_channel else (d,))
    feeds = [state_feeds(d, ins, s, b, lambda s, b: [s] + [max(1, s - 2)] * (b - 1))
             for s, b in SHAPES]
    check(tmp_path, q, feeds, opt)


# -- hand-built nodes ---------------------------------------------------------------------

def qweights(name, d, k, sign, per_col, zp=None):
    """Initializers ``name`` [d, k, 4H], ``name``_s (scale) and ``name``_z
    (zero point): per_col -> [d, 4H] else [d]. ``zp``: the uint8 zero point
    (one per direction, or one value for all columns); int8: zero."""
    dt = np.int8 if sign else np.uint8
    lo, hi = (-127, 128) if sign else (0, 256)
    pshape = (d, 4 * H) if per_col else (d,)
    if sign:
        z = np.zeros(pshape, np.int8)
    elif per_col:
        z = np.full(pshape, zp, np.uint8)          # onnxruntime: one value for all columns
    else:
        z = np.array(zp, np.uint8).reshape(pshape)
    s = (R.uniform(0.5, 1.5, pshape) * 0.5 / 127).astype(np.float32)
    return [init(name, R.integers(lo, hi, (d, k, 4 * H)).astype(dt)), init(name + "_s", s),
            init(name + "_z", z)]


# name: (direction, W (signed, per column, uint8 zero point), R (same: W and R are of
#        one type, T2), optional inputs, outputs, attributes)
NODES = {
    "fwd_s8_tensor_plain": ("forward", (True, False, None), (True, False, None), [],
                            ["y", "yh", "yc"], {}),
    "rev_u8_column_b_lens": ("reverse", (False, True, 128), (False, True, 120),
                             ["B", "sl"], ["y", "yh", ""], {}),
    "bi_u8_states_peep": ("bidirectional", (False, True, 140), (False, False, [131, 125]),
                          ["B", "h0", "c0", "P"], ["y", "yh", "yc"], {}),
    "bi_lens_no_y_clip": ("bidirectional", (True, False, None), (True, True, None),
                          ["B", "sl", "h0"], ["", "yh", "yc"],
                          dict(clip=0.8, input_forget=1)),
    "fwd_lens_acts": ("forward", (True, True, None), (True, False, None), ["sl", "c0"],
                      ["y", "", "yc"],
                      dict(activations=["HardSigmoid", "LeakyRelu", "Softsign"],
                           activation_alpha=[0.3, 0.1], activation_beta=[0.6])),
}


def _hand_model(direction, wq, rq, opt_ins, outs, attrs, tag):
    d = DIRS[direction]
    inits = qweights(f"{tag}W", d, I, *wq) + qweights(f"{tag}R", d, H, *rq)
    ins = ["x", f"{tag}W", f"{tag}R", "", "", "", "", ""]
    if "B" in opt_ins:
        inits.append(init(f"{tag}B", f32(d, 8 * H, scale=0.5)))
        ins[3] = f"{tag}B"
    if "P" in opt_ins:
        inits.append(init(f"{tag}P", f32(d, 3 * H, scale=0.5)))
        ins[7] = f"{tag}P"
    for k, n in ((4, "sl"), (5, "h0"), (6, "c0")):
        if n in opt_ins:
            ins[k] = n
    ins += [f"{tag}W_s", f"{tag}W_z", f"{tag}R_s", f"{tag}R_z"]
    node = h.make_node("DynamicQuantizeLSTM", ins, [o and f"{tag}{o}" for o in outs],
                       domain=MS, name=tag, hidden_size=H, direction=direction, **attrs)
    return node, inits


@OPT
def test_hand_built(tmp_path, opt):
    """Every node of NODES in one model (a model per direction count: the
    states have [D, batch, H])."""
    for d in (1, 2):
        nodes, inits, outs = [], [], []
        opt_ins = set()
        for tag, (direction, wq, rq, oi, o, attrs) in NODES.items():
            if DIRS[direction] != d:
                continue
            node, ini = _hand_model(direction, wq, rq, oi, o, attrs, tag)
            nodes.append(node)
            inits += ini
            outs += [(x, T.FLOAT, None) for x in node.output if x]
            opt_ins |= set(oi)
        inputs = [("x", T.FLOAT, ["s", "b", I])]
        if "sl" in opt_ins:
            inputs.append(("sl", T.INT32, ["b"]))
        inputs += [(n, T.FLOAT, [d, "b", H]) for n in ("h0", "c0") if n in opt_ins]
        m = model(nodes, inputs, outs, inits=inits, ms_opset=1)
        (tmp_path / str(d)).mkdir()
        # lengths: all s at (2, 1); 4, 3, 1 (of 5 steps) at (5, 3)
        feeds = [state_feeds(d, opt_ins, s, b, lambda s, b: [s] if b == 1 else [s - 1, 3, 1])
                 for s, b in SHAPES]
        check(tmp_path / str(d), m, feeds, opt)


# -- refusals ---------------------------------------------------------------------------

def _single(direction="forward", w_shape=None, r_shape=None, ws_shape=None, zp_type=None,
            x_shape=("s", "b", I), **attrs):
    d = DIRS.get(direction, 1)
    w_shape = w_shape or (d, I, 4 * H)
    r_shape = r_shape or (d, H, 4 * H)
    ws_shape = ws_shape or (d,)
    zt = zp_type or np.int8
    inits = [init("W", np.ones(w_shape, np.int8)), init("R", np.ones(r_shape, np.int8)),
             init("ws", np.full(ws_shape, 0.01, np.float32)), init("wz", np.zeros((d,), zt)),
             init("rs", np.full((d,), 0.01, np.float32)), init("rz", np.zeros((d,), np.int8))]
    attrs.setdefault("hidden_size", H)
    node = h.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "", "", "", "", "",
                                               "ws", "wz", "rs", "rz"], ["y"], domain=MS,
                       name="dql", direction=direction, **attrs)
    return model([node], [("x", T.FLOAT, list(x_shape))], [("y", T.FLOAT, None)], inits=inits,
                 ms_opset=1)


@pytest.mark.parametrize("kw, match", [
    (dict(w_shape=(1, 4 * H, I)),
     r"node 'dql' \(DynamicQuantizeLSTM\): input 'W' has dim 1 = 32: expected input size "
     r"\(X dim 2\) = 6 \(W is \[num_directions, input_size, 4 \* hidden_size\]"),
    (dict(direction="bidirectional", r_shape=(1, H, 4 * H)),
     r"input 'R' has dim 0 = 1: expected num_directions = 2"),
    (dict(ws_shape=(1, 2 * H)),
     r"input 'W_scale' has dim 1 = 16: expected 4 \* hidden_size = 32 \(\[num_directions\] "
     r"per direction or \[num_directions, 4 \* hidden_size\] per column\)"),
    (dict(ws_shape=(1, 1, 4 * H)), r"input 'W_scale' has shape \[1x1x32\]: expected"),
    (dict(zp_type=np.uint8), r"input 'W_zero_point' has type tensor\(uint8\) but 'W' has "
     r"tensor\(int8\) \(both are T2\)"),
    (dict(direction="sideways"), r"attribute 'direction' = 'sideways': expected one of"),
    (dict(hidden_size=0), r"attribute 'hidden_size' = 0: expected >= 1"),
    (dict(activations=["Sigmoid", "Tanh", "Gelu"]), r"unsupported activation 'Gelu'"),
])
def test_refused(tmp_path, kw, match):
    with pytest.raises(OnnxMlirError, match=match):
        onnx_mlir_py.compile(_single(**kw), tmp_path / "m.so")


def test_refused_dynamic_hidden(tmp_path):
    """No hidden_size and W / R of dynamic dims: the sizes of the loop state
    are not known at compile time."""
    node = h.make_node("DynamicQuantizeLSTM", ["x", "W", "R", "", "", "", "", "",
                                               "ws", "wz", "rs", "rz"], ["y"], domain=MS,
                       name="dql")
    m = model([node], [("x", T.FLOAT, ["s", "b", I]), ("W", T.INT8, [1, I, "g"]),
                       ("R", T.INT8, [1, "h", "g"]), ("ws", T.FLOAT, [1]), ("wz", T.INT8, [1]),
                       ("rs", T.FLOAT, [1]), ("rz", T.INT8, [1])], [("y", T.FLOAT, None)],
              ms_opset=1)
    with pytest.raises(OnnxMlirError, match=r"node 'dql' \(DynamicQuantizeLSTM\): hidden_size "
                                            r"is not given and W and R have dynamic dims"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_run_time_checks(tmp_path):
    """A sequence length past X's steps, and X's input size (dynamic) other
    than W's, stop the call with an error naming the node."""
    node, inits = _hand_model("forward", (True, False, None), (True, False, None), ["sl"],
                              ["y"], {}, "n")
    m = model([node], [("x", T.FLOAT, ["s", "b", "i"]), ("sl", T.INT32, ["b"])],
              [("ny", T.FLOAT, None)], inits=inits, ms_opset=1)
    check_rejects(tmp_path, m, [{"x": f32(3, 2, I), "sl": np.array([3, 4], np.int32)}],
                  r"node 'n' \(DynamicQuantizeLSTM\): .*sequence_lens")
    (tmp_path / "b").mkdir()
    check_rejects(tmp_path / "b", m, [{"x": f32(3, 2, I + 1), "sl": np.array([3, 1], np.int32)}],
                  r"node 'n' \(DynamicQuantizeLSTM\): input 'W' has dim 1 = 6: expected input "
                  r"size \(X dim 2\) = 7")
