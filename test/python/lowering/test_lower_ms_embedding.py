"""com.microsoft EmbedLayerNormalization against onnxruntime, compiled once
per model at -O0 and -O3 and run at two shapes of a dynamic batch and
sequence: with and without segment ids, mask (mask_index zeros without it;
mask values other than 1 not counted, as onnxruntime), position_ids [B, S] /
[1, S] / a dynamic batch that is 1 at run time, the embedding_sum output.
Refusals: an out-of-range input id / position id at run time (onnxruntime
fails the run too), f16 and unpaired segment inputs at compile time."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from dynamic_util import check_rejects, check_shapes, model
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.testing.check import reference

R = np.random.default_rng(11)
V, P, G, H = 11, 9, 3, 8
MS = "com.microsoft"


def _model(seg, mask, pids, outs, pid_dims=("b", "s"), et=T.FLOAT):
    """``pids``: position_ids present; ``outs``: output names used
    (y, mask_index 'mi', embedding sum 'es')."""
    inits = [h.make_tensor("w", et, [V, H], R.standard_normal((V, H)).astype(np.float32)),
             h.make_tensor("p", et, [P, H], R.standard_normal((P, H)).astype(np.float32)),
             h.make_tensor("ga", et, [H], R.standard_normal(H).astype(np.float32)),
             h.make_tensor("be", et, [H], R.standard_normal(H).astype(np.float32))]
    if seg:
        inits.append(h.make_tensor("g", et, [G, H], R.standard_normal((G, H)).astype(np.float32)))
    names = ["ids", "seg" if seg else "", "w", "p", "g" if seg else "", "ga", "be",
             "mask" if mask else "", "pids" if pids else ""]
    while names[-1] == "":
        names.pop()
    inputs = [("ids", T.INT32, ["b", "s"])]
    if seg:
        inputs.append(("seg", T.INT32, ["b", "s"]))
    if mask:
        inputs.append(("mask", T.INT32, ["b", "s"]))
    if pids:
        inputs.append(("pids", T.INT32, list(pid_dims)))
    res = [o if o in outs else "" for o in ("y", "mi", "es")]
    while res[-1] == "":
        res.pop()
    # onnxruntime's shape inference types output 1 unless mask_index_type is 0
    # (its kernel writes mask_index whenever it is used, whatever the attribute)
    kw = {} if "mi" in outs else dict(mask_index_type=0)
    node = h.make_node("EmbedLayerNormalization", names, res, domain=MS, epsilon=1e-5,
                       name="eln", **kw)
    types = {"y": et, "mi": T.INT32, "es": et}
    return model([node], inputs, [(o, types[o], None) for o in res if o],
                 inits=inits, ms_opset=1)


def _feeds(m, sizes):
    out = {}
    for i in m.graph.input:
        if i.name in {t.name for t in m.graph.initializer}:
            continue
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param]
                 for d in i.type.tensor_type.shape.dim]
        hi = {"ids": V, "seg": G, "mask": 3, "pids": P}[i.name]
        out[i.name] = R.integers(0, hi, shape).astype(np.int32)
    return out


# (segment, mask, position_ids, outputs, position_ids dims, run-time sizes)
CASES = {
    "all": (True, True, True, ("y", "mi", "es"), ("b", "s"),
            [dict(b=2, s=5), dict(b=3, s=2)]),
    "bert_like": (True, True, False, ("y", "mi"), None, [dict(b=2, s=9), dict(b=1, s=3)]),
    "distilbert_no_segment": (False, True, False, ("y", "mi"), None,
                              [dict(b=3, s=4), dict(b=1, s=7)]),
    "no_mask_index_zeros": (True, False, False, ("y", "mi", "es"), None,
                            [dict(b=2, s=3), dict(b=4, s=6)]),
    "output_only": (False, False, False, ("y",), None, [dict(b=2, s=3), dict(b=1, s=8)]),
    "gpt2_like_pids_1s": (False, False, True, ("y", "es"), (1, "s"),
                          [dict(b=2, s=5), dict(b=3, s=11)]),
    "pids_batch_1_or_b": (True, False, True, ("y", "mi"), ("k", "s"),
                          [dict(b=3, s=4, k=1), dict(b=2, s=6, k=2)]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", CASES)
def test_embed_layer_norm(tmp_path, case, opt_level):
    seg, mask, pids, outs, pdims, sizes = CASES[case]
    m = _model(seg, mask, pids, outs, pdims or ("b", "s"))
    check_shapes(tmp_path, m, [_feeds(m, s) for s in sizes], opt_level=opt_level,
                 rtol=1e-5, atol=1e-5, engine="onnxruntime")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_out_of_range_ids_fail_at_run_time(tmp_path, opt_level):
    m = _model(True, True, True, ("y",))
    feeds = _feeds(m, dict(b=2, s=3))
    bad = dict(feeds, ids=feeds["ids"].copy())
    bad["ids"][1, 2] = V
    with pytest.raises(Exception, match="out of range"):   # onnxruntime refuses it too
        reference(m, bad, "onnxruntime")
    neg = dict(feeds, ids=feeds["ids"].copy())
    neg["ids"][0, 0] = -1
    check_rejects(tmp_path, m, [bad, neg], match=r"eln.*input id -?\d+ is out of range "
                  r"\[0, 10\] for word_embedding", opt_level=opt_level)


def test_out_of_range_position_and_segment_ids(tmp_path):
    m = _model(True, False, True, ("y",))
    feeds = _feeds(m, dict(b=2, s=3))
    bad_p = dict(feeds, pids=feeds["pids"] + P)
    check_rejects(tmp_path, m, [bad_p], match=r"position id \d+ is out of range")
    m = _model(True, False, False, ("y",))
    feeds = _feeds(m, dict(b=2, s=3))
    check_rejects(tmp_path / "s", m, [dict(feeds, seg=feeds["seg"] - G)],
                  match=r"segment id -\d+ is out of range")
    # no position_ids: the sequence index must stay within the table
    check_rejects(tmp_path / "q", m, [_feeds(m, dict(b=1, s=P + 1))],
                  match=r"sequence length 10 exceeds position_embedding's 9 rows")


@pytest.mark.parametrize("what", ["f16", "segment_ids_only"])
def test_refused_at_compile_time(tmp_path, what):
    if what == "f16":
        m, match = _model(True, True, False, ("y",), et=T.FLOAT16), r"eln.*expected f32"
    else:
        m = _model(True, True, False, ("y",))
        m.graph.node[0].input[4] = ""
        match = r"eln.*'segment_ids' without 'segment_embedding' is not supported"
    with pytest.raises(OnnxMlirError, match=match):
        onnx_mlir_py.compile(m, tmp_path / "m.so")
