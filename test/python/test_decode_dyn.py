"""benchmarks/decode_zoo.py's GPT-2 decode step with batch, sequence and
past length all dynamic (compile_time's gpt2_decode_dyn row, #29), at small
sizes: compiled once at -O3, matches onnxruntime at two (batch, seq, past)
(the causal mask over past + new tokens matters for seq > 1), and the
static-batch model is unchanged by the new parameters."""
from __future__ import annotations

import os
import sys

import numpy as np
import onnxruntime as ort

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _decode_zoo():
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import decode_zoo
    return decode_zoo


SMALL = dict(layers=2, d=64, heads=4, ffn=256, vocab=1000, positions=256)


def test_dynamic_batch_seq_past_against_onnxruntime(tmp_path):
    dz = _decode_zoo()
    model = dz.gpt2_decode(**SMALL, batch="batch", seq="seq")
    dims = [[d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
            for vi in model.graph.input[:2]]
    assert dims == [["batch", "seq"], ["batch", 4, "past", 16]]
    assert [d.dim_param for d in model.graph.output[1].type.tensor_type.shape.dim][2] \
        == "past + seq"
    so = onnx_mlir_py.compile(model, output=os.fspath(tmp_path / "m.so"), opt_level=3)
    sess = ExecutionSession(so)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in model.graph.input]
    for batch, seq, past in [(1, 1, 127), (2, 3, 40)]:
        feeds = dz.step_feeds(model, past, seed=past, batch=batch, seq=seq)
        assert feeds["input_ids"].shape == (batch, seq)
        want = ref.run(None, feeds)
        got = sess.run([feeds[n] for n in names])
        assert got[0].shape == (batch, seq, 1000)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_one_token_matches_the_static_batch_model():
    """At batch 1 and one token the causal mask is all open: the dynamic
    model's logits are the past-only-dynamic model's (onnxruntime)."""
    dz = _decode_zoo()
    dyn = dz.gpt2_decode(**SMALL, batch="batch", seq="seq")
    static = dz.gpt2_decode(**SMALL)
    feeds = dz.step_feeds(static, 9)
    a = ort.InferenceSession(dyn.SerializeToString()).run(None, feeds)
    b = ort.InferenceSession(static.SerializeToString()).run(None, feeds)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)
