"""Run-time checks of the dims a model ties together (issue 11, item 4): the
same ONNX dim_param on two inputs (checked by the entry point), and the dims
that the lowerings index one operand with another's extent (MatMul/Gemm K,
Concat, the gather/scatter family, normalization parameters, RNN inputs).
Each model has dynamic dims, runs right at two or more consistent shapes
(against onnx.reference) and fails with RuntimeInputError naming the node or
the inputs at an inconsistent one, instead of reading past a buffer."""
from __future__ import annotations

import functools
import subprocess

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

from onnx_models import graph_model
from test_c_example import _build_example, _parse_outputs

F, I64, I8 = T.FLOAT, T.INT64, T.INT8


_model = functools.partial(graph_model, out_type=T.UNDEFINED)


def _feeds(m, shapes, rng, ints=None):
    out = {}
    for vi, s in zip(m.graph.input, shapes):
        t = vi.type.tensor_type.elem_type
        if t == I8:
            out[vi.name] = rng.integers(-100, 100, s).astype(np.int8)
        elif t == I64:
            out[vi.name] = np.asarray(ints[vi.name](s) if callable(ints[vi.name])
                                      else ints[vi.name], np.int64)
        else:
            x = rng.standard_normal(s).astype(np.float32)
            out[vi.name] = np.abs(x) if vi.name == "v" else x     # a variance
    return out


def _case(tmp_path, m, good, bad, match, ints=None, opt_level=0):
    """Compile once; every shape set of ``good`` matches onnx.reference,
    every one of ``bad`` raises RuntimeInputError matching ``match``; the
    session still works after a failed check."""
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ReferenceEvaluator(m)
    rng = np.random.default_rng(0)
    for shapes in good:
        feeds = _feeds(m, shapes, rng, ints)
        got = sess.run(list(feeds.values()))
        for g, e in zip(got, ref.run(None, feeds)):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    for shapes in bad:
        with pytest.raises(RuntimeInputError, match=match):
            sess.run(list(_feeds(m, shapes, rng, ints).values()))
    if not good:
        return sess
    feeds = _feeds(m, good[0], rng, ints)
    np.testing.assert_allclose(sess.run(list(feeds.values()))[0],
                               ref.run(None, feeds)[0], rtol=1e-4, atol=1e-5)
    return sess


# -- dim_param: the entry point ----------------------------------------------------
def _dim_param_model():
    """x: [n, 4], y: [n, 4] but no op ties them: only the names do."""
    return _model([h.make_node("Relu", ["x"], ["y0"], name="r0"),
                   h.make_node("Neg", ["y"], ["y1"], name="r1")],
                  [("x", F, ["n", 4]), ("y", F, ["n", "m"])], outputs=("y0", "y1"))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_dim_param_tie(tmp_path, opt_level):
    sess = _case(tmp_path, _dim_param_model(), good=[[(3, 4), (3, 4)], [(5, 4), (5, 7)]],
                 bad=[[(3, 4), (5, 4)], [(3, 4), (0, 4)]],
                 match=r"input 1 \('y'\) dim 0 \('n'\) is \d but input 0 \('x'\) has 3",
                 opt_level=opt_level)
    assert '"dims": [-1, 4]' in sess.input_signature()    # onnx-mlir's format: -1


def test_dim_param_tie_from_c(tmp_path):
    exe = _build_example(tmp_path)
    so = onnx_mlir_py.compile(_dim_param_model(), tmp_path / "dp.so", opt_level=3)
    ok = subprocess.run([exe, so, ":3x4", ":3x2"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    y0, y1 = _parse_outputs(ok.stdout)
    assert y0.shape == (3, 4) and y1.shape == (3, 2)
    bad = subprocess.run([exe, so, ":3x4", ":5x2"], capture_output=True, text=True)
    assert bad.returncode == 1, (bad.returncode, bad.stdout, bad.stderr)
    assert "input 1 ('y') dim 0 ('n') is 5 but input 0 ('x') has 3" in bad.stderr, bad.stderr


# -- MatMul / Gemm: the contraction dims ---------------------------------------------
def _matmul_model():
    return _model([h.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                  [("a", F, [None, None]), ("b", F, [None, 3])])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_matmul_k(tmp_path, opt_level):
    _case(tmp_path, _matmul_model(), good=[[(2, 4), (4, 3)], [(5, 7), (7, 3)]],
          bad=[[(2, 4), (5, 3)], [(2, 4), (3, 3)]],
          match=r"node 'mm' \(MatMul\): inner dimensions differ: A has K = 4, B has K = \d",
          opt_level=opt_level)


def test_matmul_k_from_c(tmp_path):
    exe = _build_example(tmp_path)
    so = onnx_mlir_py.compile(_matmul_model(), tmp_path / "mm.so", opt_level=3)
    ok = subprocess.run([exe, so, ":2x4", ":4x3"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    a = (0.01 * np.arange(8)).reshape(2, 4)
    b = (0.01 * np.arange(12)).reshape(4, 3)
    np.testing.assert_allclose(_parse_outputs(ok.stdout)[0], a @ b, rtol=1e-5)
    bad = subprocess.run([exe, so, ":2x4", ":6x3"], capture_output=True, text=True)
    assert bad.returncode == 1, (bad.returncode, bad.stdout, bad.stderr)
    assert "node 'mm' (MatMul): inner dimensions differ: A has K = 4, B has K = 6" \
        in bad.stderr, bad.stderr


def test_matmul_nd_k(tmp_path):
    m = _model([h.make_node("MatMul", ["a", "b"], ["y"], name="mm3")],
               [("a", F, [None, 2, None]), ("b", F, [None, 5])])
    _case(tmp_path, m, good=[[(1, 2, 3), (3, 5)], [(4, 2, 6), (6, 5)]],
          bad=[[(4, 2, 6), (7, 5)]],
          match=r"node 'mm3' \(MatMul\): inner dimensions differ: A has K = 6, B has K = 7")


def test_gemm_k(tmp_path):
    m = _model([h.make_node("Gemm", ["a", "b"], ["y"], name="gm", transB=1)],
               [("a", F, [None, None]), ("b", F, [3, None])])
    _case(tmp_path, m, good=[[(2, 4), (3, 4)], [(6, 1), (3, 1)]],
          bad=[[(2, 4), (3, 5)]], match=r"node 'gm' \(Gemm\): A dim 1 is 4 but B dim 1 is 5")


# -- Concat ------------------------------------------------------------------------
def test_concat_non_axis_dims(tmp_path):
    m = _model([h.make_node("Concat", ["a", "b"], ["y"], name="cat", axis=1)],
               [("a", F, [None, None]), ("b", F, [None, 2])])
    _case(tmp_path, m, good=[[(3, 4), (3, 2)], [(1, 1), (1, 2)]],
          bad=[[(3, 4), (5, 2)], [(3, 4), (2, 2)]],
          match=r"node 'cat' \(Concat\): input #1 dim 0 is \d but the other inputs' is 3")


# -- gather / scatter ----------------------------------------------------------------
def test_gather_elements_indices_dims(tmp_path):
    m = _model([h.make_node("GatherElements", ["d", "i"], ["y"], name="ge", axis=1)],
               [("d", F, [None, None]), ("i", I64, [None, None])])
    _case(tmp_path, m, good=[[(3, 5), (3, 2)], [(4, 2), (4, 6)]],
          bad=[[(3, 5), (4, 2)]], ints={"i": lambda s: np.ones(s)},
          match=r"node 'ge' \(GatherElements\): indices dim 0 is 4 but data dim 0 is only 3")


def test_gather_nd_batch_dims(tmp_path):
    m = _model([h.make_node("GatherND", ["d", "i"], ["y"], name="gnd", batch_dims=1)],
               [("d", F, [None, None, 3]), ("i", I64, [None, 1])])
    _case(tmp_path, m, good=[[(2, 4, 3), (2, 1)], [(5, 2, 3), (5, 1)]],
          bad=[[(2, 4, 3), (3, 1)]], ints={"i": lambda s: np.ones(s)},
          match=r"node 'gnd' \(GatherND\): batch dim 0 differs: data has 2, indices 3")


def test_scatter_elements_updates_dims(tmp_path):
    m = _model([h.make_node("ScatterElements", ["d", "i", "u"], ["y"], name="se", axis=0)],
               [("d", F, [None, None]), ("i", I64, [None, None]), ("u", F, [None, None])])
    _case(tmp_path, m, good=[[(3, 4), (1, 4), (1, 4)], [(5, 2), (2, 2), (2, 2)]],
          bad=[[(3, 4), (1, 4), (1, 3)], [(3, 4), (1, 5), (1, 5)]],
          ints={"i": lambda s: np.zeros(s)},
          match=r"node 'se' \(ScatterElements\): (updates dim 1 is 3 but indices dim 1 is 4"
                r"|indices dim 1 is 5 but data dim 1 is only 4)")


def test_scatter_nd_updates_dims(tmp_path):
    m = _model([h.make_node("ScatterND", ["d", "i", "u"], ["y"], name="snd")],
               [("d", F, [None, None]), ("i", I64, [None, 1]), ("u", F, [None, None])])
    _case(tmp_path, m, good=[[(4, 3), (2, 1), (2, 3)], [(2, 5), (1, 1), (1, 5)]],
          bad=[[(4, 3), (2, 1), (2, 4)], [(4, 3), (2, 1), (3, 3)]],
          ints={"i": lambda s: np.arange(s[0]).reshape(s)},
          match=r"node 'snd' \(ScatterND\): updates dim \d is \d: expected \d \(indices")


# -- normalization parameters --------------------------------------------------------
def test_layer_norm_scale_len(tmp_path):
    m = _model([h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="ln", axis=-1)],
               [("x", F, [None, None]), ("s", F, [None]), ("b", F, [None])])
    _case(tmp_path, m, good=[[(3, 4), (4,), (4,)], [(2, 7), (7,), (7,)]],
          bad=[[(3, 4), (5,), (4,)], [(3, 4), (4,), (3,)]],
          match=r"node 'ln' \(LayerNormalization\): (Scale|B) dim 0 is \d but X dim 1 is 4")


def test_batch_norm_channel_len(tmp_path):
    m = _model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")],
               [("x", F, [None, None, 2]), ("s", F, [None]), ("b", F, [None]),
                ("m", F, [None]), ("v", F, [None])])
    good = [[(2, 3, 2)] + [(3,)] * 4, [(1, 5, 2)] + [(5,)] * 4]
    _case(tmp_path, m, good=good, bad=[[(2, 3, 2), (3,), (3,), (4,), (3,)]],
          match=r"node 'bn' \(BatchNormalization\): input_mean dim 0 is 4 but X dim 1 is 3")


def test_instance_norm_channel_len(tmp_path):
    m = _model([h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], name="inn")],
               [("x", F, [None, None, None]), ("s", F, [None]), ("b", F, [None])])
    _case(tmp_path, m, good=[[(2, 3, 4), (3,), (3,)], [(1, 2, 5), (2,), (2,)]],
          bad=[[(2, 3, 4), (2,), (3,)]],
          match=r"node 'inn' \(InstanceNormalization\): scale dim 0 is 2 but X dim 1 is 3")


# -- recurrent -------------------------------------------------------------------------
def test_lstm_input_size_and_state(tmp_path):
    rng = np.random.default_rng(1)
    H, I = 3, 2
    w = h.make_tensor("W", F, [1, 4 * H, I], rng.standard_normal(4 * H * I).tolist())
    r = h.make_tensor("R", F, [1, 4 * H, H], rng.standard_normal(4 * H * H).tolist())
    m = _model([h.make_node("LSTM", ["x", "W", "R", "", "", "h0"], ["y"], name="lstm",
                            hidden_size=H)],
               [("x", F, [None, None, None]), ("h0", F, [1, None, H])], inits=[w, r])
    _case(tmp_path, m, good=[[(4, 2, I), (1, 2, H)], [(1, 3, I), (1, 3, H)]],
          bad=[[(4, 2, I + 1), (1, 2, H)], [(4, 2, I), (1, 3, H)]],
          match=r"node 'lstm' \(LSTM\): input '(W|initial_h)' has dim \d = \d: expected "
                r"(input size|batch)")


# -- quantization parameters -----------------------------------------------------------
def test_dequantize_per_axis_len(tmp_path):
    m = _model([h.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq", axis=1)],
               [("x", I8, [None, None]), ("s", F, [None])], opset=19)
    # a scale of one element at run time is per tensor (broadcast)
    _case(tmp_path, m, good=[[(2, 3), (3,)], [(4, 5), (5,)], [(2, 3), (1,)]],
          bad=[[(2, 3), (2,)], [(2, 3), (4,)]],
          match=r"node 'dq' \(DequantizeLinear\): x_scale has \d elements, expected 1 or "
                r"x's dim 1 \(3\)")


def test_topk_k_within_axis(tmp_path):
    m = _model([h.make_node("TopK", ["x", "k"], ["y", "i"], name="topk", axis=1)],
               [("x", F, [None, None]), ("k", I64, [1])], outputs=("y", "i"))
    _case(tmp_path, m, good=[[(2, 5), (1,)], [(3, 4), (1,)]], bad=[[(3, 2), (1,)]],
          ints={"k": [3]},
          match=r"node 'topk' \(TopK\): k is 3 but the input has 2 elements on axis 1")


# -- control flow ----------------------------------------------------------------------
def test_scan_inputs_same_length(tmp_path):
    body = h.make_graph(
        [h.make_node("Mul", ["x_t", "w_t"], ["p"]), h.make_node("Add", ["a_in", "p"], ["a_out"])],
        "body", [h.make_tensor_value_info(n, F, [3]) for n in ("a_in", "x_t", "w_t")],
        [h.make_tensor_value_info("a_out", F, [3])])
    m = _model([h.make_node("Scan", ["a0", "x", "w"], ["y"], body=body, num_scan_inputs=2,
                            name="scan")],
               [("a0", F, [3]), ("x", F, [None, 3]), ("w", F, [None, 3])], opset=16)
    _case(tmp_path, m, good=[[(3,), (4, 3), (4, 3)], [(3,), (1, 3), (1, 3)]],
          bad=[[(3,), (4, 3), (5, 3)], [(3,), (4, 3), (2, 3)]],
          match=r"node 'scan' \(Scan\): scan input #1 dim 0 is \d but scan input #0 dim 0 is 4")


# -- data layout / one-hot -----------------------------------------------------------
def test_space_to_depth_divisible(tmp_path):
    m = _model([h.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=2)],
               [("x", F, [None, 3, None, None])])
    _case(tmp_path, m, good=[[(1, 3, 4, 6)], [(2, 3, 2, 2)]], bad=[[(1, 3, 4, 5)]],
          match=r"node 's2d' \(SpaceToDepth\): width 5 is not divisible by 2")


def test_one_hot_negative_depth(tmp_path):
    vals = h.make_tensor("vals", F, [2], [0.0, 1.0])
    m = _model([h.make_node("OneHot", ["i", "d", "vals"], ["y"], name="oh")],
               [("i", I64, [None]), ("d", I64, [])], inits=[vals], opset=11)
    depth = {"i": lambda s: np.arange(s[0]) % 3, "d": 3}
    _case(tmp_path, m, good=[[(4,), ()], [(2,), ()]], bad=[], match="", ints=depth)
    depth["d"] = -2
    _case(tmp_path, m, good=[], bad=[[(4,), ()]], ints=depth,
          match=r"node 'oh' \(OneHot\): depth must be positive, got -2")
