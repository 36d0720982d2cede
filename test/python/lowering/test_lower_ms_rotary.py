"""com.microsoft RotaryEmbedding against onnxruntime, compiled once per model at
-O0 and -O3 and run at two shapes of the dynamic batch and sequence: 3-D
input (heads from the cache width or from num_heads) and 4-D, halves and
interleaved pairs, full and partial rotation (rotary_embedding_dim), position
ids [B, S], a [1] offset or a scalar offset, a cache with a dynamic row
count, f16, the ``scale`` attribute (unused on onnxruntime's CPU as here).
Refusals at compile time (is_packed_batching, a dynamic hidden size) and at
run time (position ids out of the caches' rows)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from dynamic_util import check_rejects, check_shapes, model
from onnx_mlir_py.errors import OnnxMlirError

R = np.random.default_rng(11)
N, HD, M = 2, 8, 12          # heads, head size, cache rows
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16}


def _model(four: bool, pos: str, half: int, attrs: dict, et=T.FLOAT, rows=M,
           hidden=N * HD):
    """pos: "ids" ([B, S]), "offset" ([1]) or "scalar" ([])."""
    x = ["b", N, "s", HD] if four else ["b", "s", hidden]
    p = {"ids": ["b", "s"], "offset": [1], "scalar": []}[pos]
    node = h.make_node("RotaryEmbedding", ["x", "p", "c", "sn"], ["y"], domain="com.microsoft",
                       name="rope", **attrs)
    return model([node], [("x", et, x), ("p", T.INT64, p), ("c", et, [rows, half]),
                          ("sn", et, [rows, half])], [("y", et, None)], ms_opset=1)


def _feeds(four, pos, half, b, s, et=T.FLOAT, rows=M, hidden=N * HD):
    dt = NP[et]
    x = [b, N, s, HD] if four else [b, s, hidden]
    f = {"x": R.standard_normal(x).astype(dt),
         "c": R.standard_normal((rows, half)).astype(dt),
         "sn": R.standard_normal((rows, half)).astype(dt)}
    if pos == "ids":
        f["p"] = R.integers(0, rows, (b, s)).astype(np.int64)
    else:
        off = int(R.integers(0, rows - s + 1))
        f["p"] = np.array([off] if pos == "offset" else off, dtype=np.int64)
    return f


# (4-D input, position form, cache width, attributes, element type, dynamic cache rows)
CASES = {
    "3d_halves_offset": (False, "offset", HD // 2, {}, T.FLOAT, False),
    "3d_pairs_ids_partial": (False, "ids", 2, dict(interleaved=1, num_heads=N,
                                                   rotary_embedding_dim=4), T.FLOAT, False),
    "3d_halves_ids_partial_scale": (False, "ids", 3, dict(num_heads=N, rotary_embedding_dim=6,
                                                          scale=0.5), T.FLOAT, False),
    "3d_num_heads_pairs_scalar_offset": (False, "scalar", HD // 2,
                                         dict(interleaved=1, num_heads=N), T.FLOAT, False),
    "4d_halves_ids_dynamic_rows": (True, "ids", HD // 2, {}, T.FLOAT, True),
    "4d_pairs_offset_partial": (True, "offset", 2, dict(interleaved=1, num_heads=N,
                                                        rotary_embedding_dim=4), T.FLOAT, False),
    "3d_f16_halves_ids": (False, "ids", HD // 2, {}, T.FLOAT16, False),
    "4d_f16_pairs_offset": (True, "offset", HD // 2, dict(interleaved=1), T.FLOAT16, False),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_rotary_embedding(tmp_path, case, opt_level):
    four, pos, half, attrs, et, dyn_rows = CASES[case]
    m = _model(four, pos, half, attrs, et, rows="m" if dyn_rows else M)
    feeds = []
    for b, s, rows in ((2, 3, M), (1, 5, M + 4 if dyn_rows else M)):
        feeds.append(_feeds(four, pos, half, b, s, et, rows))
    tol = 1e-5 if et == T.FLOAT else 2e-3
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, rtol=tol, atol=tol,
                 engine="onnxruntime")


def test_refusals(tmp_path):
    m = _model(False, "ids", HD // 2, dict(is_packed_batching=1))
    with pytest.raises(OnnxMlirError, match=r"node 'rope' \(RotaryEmbedding\): "
                       r"is_packed_batching=1 \(ragged batches\) is not supported"):
        onnx_mlir_py.compile(m, tmp_path / "a.so")
    m = _model(False, "ids", HD // 2, {}, hidden="h")
    with pytest.raises(OnnxMlirError, match=r"node 'rope' \(RotaryEmbedding\): input's last dim "
                       r"\(the hidden or head size\) and the caches' dim 1 must be static"):
        onnx_mlir_py.compile(m, tmp_path / "b.so")


@pytest.mark.parametrize("pos", ["ids", "offset"])
def test_positions_out_of_range(tmp_path, pos):
    """Positions past the caches' rows fail the call (as onnxruntime fails)
    instead of reading past the caches."""
    m = _model(False, pos, HD // 2, {})
    f = _feeds(False, pos, HD // 2, 2, 3)
    if pos == "ids":
        f["p"][1, 2] = M
        match = r"node 'rope' \(RotaryEmbedding\): position_ids in \[\d+, 12\] are out of " \
                r"the caches' range \[0, 12\)"
    else:
        f["p"][0] = M - 2
        match = r"node 'rope' \(RotaryEmbedding\): position_ids offset 10 with sequence " \
                r"length 3 exceeds the caches' range \[0, 12\)"
    check_rejects(tmp_path, m, [f], match)
