"""RotaryEmbedding (v23, compiled through its function body) against
onnx.reference: interleaved or not, full or partial rotary_embedding_dim,
3-D input with num_heads or 4-D, with position_ids (offsets into a longer
cache) or without (per-token caches); dynamic batch at two run-time sizes.
Issue 16 reported wrong offsets: none of these 16 configurations differs."""
import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_shapes, model

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
