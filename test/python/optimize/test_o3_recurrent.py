"""-O3 recurrent ops (recurrent.py): the input projection of all steps is one
packed GEMM [S*B, I] x [I, G*H] (constant W[d]ᵀ relaid out at compile time),
each step a packed matmul H·R[d]ᵀ and the fused gate generic. Constant
weights (initializers), as exported models have them; sequence length and
batch dynamic, each model compiled once and run at several (seq, batch)
against onnxruntime (which honours sequence_lens, unlike onnx.reference), at 1
and 2 threads (bidirectional ops run their directions on two threads)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

R = np.random.default_rng(11)
I = 12                                   # input size
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
SHAPES = [(5, 3), (1, 1), (13, 17)]      # (seq, batch): batch 17 crosses a row block


def f32(*shape, scale=0.4):
    return (R.standard_normal(shape) * scale).astype(np.float32)


class Layers:
    """Independent recurrent nodes on one X [s, b, I] (dims dynamic unless
    ``static``), weights as initializers; optional per-node sequence_lens /
    initial state inputs, whose batch dim follows X's."""

    def __init__(self, static=None):
        dims = list(static) if static else ["s", "b"]
        self.inputs = [h.make_tensor_value_info("x", T.FLOAT, dims + [I])]
        self.batch = dims[1]
        self.inits, self.nodes, self.outs, self.states = [], [], [], []
        self.seq_lens = False

    def add(self, op, hidden, direction="forward", bias=True, seq_lens=False, h0=False,
            c0=False, peep=False, layout=0, **attrs):
        k, g = len(self.nodes), GATES[op]
        d = 2 if direction == "bidirectional" else 1
        names = ["x", f"w{k}", f"r{k}", "", "", ""] + (["", ""] if op == "LSTM" else [])
        self.inits += [nh.from_array(f32(d, g * hidden, I), f"w{k}"),
                       nh.from_array(f32(d, g * hidden, hidden), f"r{k}")]
        if bias:
            self.inits.append(nh.from_array(f32(d, 2 * g * hidden), f"b{k}"))
            names[3] = f"b{k}"
        if seq_lens:
            names[4] = "sl"
            self.seq_lens = True
        for slot, on, nm in ((5, h0, "h"), (6, c0, "c")):
            if on:
                names[slot] = f"{nm}{k}"
                dims = [self.batch, d, hidden] if layout else [d, self.batch, hidden]
                self.inputs.append(h.make_tensor_value_info(names[slot], T.FLOAT, dims))
                self.states.append((names[slot], d, hidden, layout))
        if peep:
            self.inits.append(nh.from_array(f32(d, 3 * hidden), f"p{k}"))
            names[7] = f"p{k}"
        while names[-1] == "":
            names.pop()
        outs = [f"y{k}", f"yh{k}"] + ([f"yc{k}"] if op == "LSTM" else [])
        if layout:
            attrs["layout"] = layout
        self.nodes.append(h.make_node(op, names, outs, name=f"{op.lower()}{k}",
                                      hidden_size=hidden, direction=direction, **attrs))
        self.outs += outs
        return self

    def model(self):
        inputs = list(self.inputs)
        if self.seq_lens:
            inputs.append(h.make_tensor_value_info("sl", T.INT32, [self.batch]))
        g = h.make_graph(self.nodes, "rec", inputs,
                         [h.make_tensor_value_info(o, T.FLOAT, None) for o in self.outs],
                         initializer=self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 22)])
        m.ir_version = 10
        return m

    def feeds(self, s, b, layout=0):
        f = {"x": f32(b, s, I) if layout else f32(s, b, I)}
        if self.seq_lens:
            f["sl"] = R.integers(1, s + 1, b).astype(np.int32)
            f["sl"][0] = s                   # one full-length row
        for name, d, hidden, lay in self.states:
            f[name] = f32(b, d, hidden) if lay else f32(d, b, hidden)
        return f


def check(tmp_path, layers: Layers, shapes=SHAPES, engine="onnxruntime", layout=0):
    m = layers.model()
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    if engine == "onnxruntime":
        ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    else:
        ref = ReferenceEvaluator(m)
    for threads in (1, 2):       # 2: the directions of bidirectional ops on two threads
        sess.set_num_threads(threads)
        for s, b in shapes:
            feeds = layers.feeds(s, b, layout)
            got = sess.run([feeds[spec.name] for spec in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip(layers.outs, got, want):
                assert g.shape == w.shape, (name, s, b)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5,
                                           err_msg=f"{name} at seq {s}, batch {b}, "
                                                   f"{threads} threads")
    return sess


def test_lstm_dynamic(tmp_path):
    """Forward with initial states, reverse with sequence_lens and peepholes,
    bidirectional without bias; hidden sizes that fill whole 32-column
    blocks (4 x 32) and that do not (4 x 20)."""
    check(tmp_path, Layers()
          .add("LSTM", 32, h0=True, c0=True)
          .add("LSTM", 20, "reverse", seq_lens=True, peep=True)
          .add("LSTM", 20, "bidirectional", bias=False, seq_lens=True, h0=True)
          .add("LSTM", 8, "bidirectional", input_forget=1, clip=0.8))


@pytest.mark.parametrize("lbr", [0, 1])
def test_gru_dynamic(tmp_path, lbr):
    """GRU both ways of linear_before_reset: forward with an initial state,
    bidirectional with sequence_lens, reverse without bias; and an RNN."""
    check(tmp_path, Layers()
          .add("GRU", 24, h0=True, linear_before_reset=lbr)
          .add("GRU", 16, "bidirectional", seq_lens=True, h0=True, linear_before_reset=lbr)
          .add("GRU", 10, "reverse", bias=False, linear_before_reset=lbr)
          .add("RNN", 12, "bidirectional", seq_lens=True))


def test_static_shapes(tmp_path):
    """Static seq and batch: the static packed kernels (a benchmark-like
    hidden size of 64, and 6, far below a block)."""
    layers = (Layers(static=(7, 4))
              .add("LSTM", 64, "bidirectional", h0=True, c0=True)
              .add("GRU", 64, "bidirectional", seq_lens=True, linear_before_reset=1)
              .add("GRU", 6, "reverse", h0=True))
    check(tmp_path, layers, shapes=[(7, 4)])


def test_layout_1_dynamic(tmp_path):
    """Batch-major layout (onnxruntime has none: onnx.reference, no sequence_lens)."""
    layers = Layers()
    layers.inputs[0] = h.make_tensor_value_info("x", T.FLOAT, ["b", "s", I])
    layers.add("LSTM", 16, "bidirectional", h0=True, c0=True, layout=1)
    layers.add("GRU", 16, "reverse", h0=True, layout=1, linear_before_reset=1)
    check(tmp_path, layers, shapes=[(4, 2), (9, 5)], engine="reference", layout=1)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_bidirectional_directions_split(tmp_path, op):
    """A bidirectional op's two directions are the two chunks of one
    parallel loop: at 2 threads each run hands chunks to the pool."""
    import ctypes
    sess = check(tmp_path, Layers().add(op, 16, "bidirectional", seq_lens=True),
                 shapes=[(6, 3)])
    tasks = ctypes.CDLL(str(tmp_path / "m.so")).omGetPoolTaskCount
    tasks.restype = ctypes.c_int64
    feeds = Layers().add(op, 16, "bidirectional", seq_lens=True).feeds(6, 3)
    for threads, split in ((2, True), (1, False)):
        sess.set_num_threads(threads)
        before = tasks()
        sess.run([feeds[spec.name] for spec in sess.input_specs])
        assert (tasks() - before >= 2) == split
