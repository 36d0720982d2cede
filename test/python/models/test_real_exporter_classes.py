"""Issue #31's classes 1 and 3 as torch's exporter writes them, each compiled
once and compared with onnxruntime at three run-time shapes.

The files (data/class_*.onnx) are exported by data/export_torch_models.py
(the ``[export]`` extra; committed, so this test needs no torch):

* ``class_squeeze_last``: ``x.squeeze(-1)`` of a dynamic last dim, which the
  legacy exporter writes as If(shape[-1] == 1, Squeeze, Identity), branches
  of ranks 2 and 3 (a voice-activity detector shipped three such models).
  The generic compile cannot lower it; an InferenceSession compiles it per
  input-shape signature (#31 item 1).
* ``class_mask_attention``: scores plus a mask [B, 1, M, S] whose M is
  dynamic and 1 at run time (a transformer shipped in a PyPI wheel failed
  with "attn_mask dim 2 must be 1 or the score dim"): one generic library,
  the mask broadcast at run time (#31 item 3).

Class 2 (Paddle's ``dim_value: -1``) is written with onnx.helper, as
Paddle2ONNX writes it: test_negative_dims.py; class 4 (transformers'
EfficientNet pooler) is test_efficientnet_dyn.py and test_lower_pool.py.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import onnx
import pytest

import onnx_mlir_py
from onnx_mlir_py.errors import NeedsInputShapesError, ShapesSpecialisedWarning
from onnx_mlir_py.testing.check import assert_match, reference

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
import export_torch_models as X  # noqa: E402

RUN_DIMS = {
    "squeeze_last": [{"batch": 2, "t": 1}, {"batch": 3, "t": 5}, {"batch": 1, "t": 1}],
    "mask_attention": [{"batch": 1, "seq": 5, "m": 1}, {"batch": 2, "seq": 7, "m": 1},
                       {"batch": 2, "seq": 4, "m": 4}],
}


def _feeds(name: str, dims: dict, seed: int) -> dict:
    return X.CLASSES[name].feeds(dims, np.random.default_rng(seed))


def test_the_files_have_the_classes():
    """What the exporter wrote is what the issue describes (so a torch
    version that exports otherwise is noticed here, not silently tested)."""
    sq = onnx.load(X.path("class_squeeze_last"))
    (if_node,) = [n for n in sq.graph.node if n.op_type == "If"]
    branches = {a.name: ([n.op_type for n in a.g.node][-1], len(a.g.output[0].type.tensor_type.shape.dim))
                for a in if_node.attribute}
    assert branches == {"then_branch": ("Squeeze", 2), "else_branch": ("Identity", 3)}
    ma = onnx.load(X.path("class_mask_attention"))
    assert [n.op_type for n in ma.graph.node] == ["Transpose", "MatMul", "Constant", "Mul", "Add",
                                                 "Softmax", "MatMul"]
    mask = [i for i in ma.graph.input if i.name == "mask"][0]
    assert [d.dim_param or d.dim_value for d in mask.type.tensor_type.shape.dim] == \
        ["batch", 1, "m", "seq"]


def test_squeeze_branch_specialised_per_shape(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    path = X.path("class_squeeze_last")
    with pytest.raises(NeedsInputShapesError):
        onnx_mlir_py.compile(path, str(tmp_path / "generic.so"))
    sess = onnx_mlir_py.InferenceSession(path)
    model = onnx.load(path)
    ranks = set()
    for i, dims in enumerate(RUN_DIMS["squeeze_last"]):
        feeds = _feeds("squeeze_last", dims, i + 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ShapesSpecialisedWarning)
            got = sess.run(None, feeds)
        expected = reference(model, feeds, engine="onnxruntime")
        assert_match(got, expected, 1e-5, 1e-5)
        ranks.add(got[0].ndim)
    assert ranks == {2, 3}          # both branches ran


def test_mask_broadcast_at_run_time(tmp_path):
    path = X.path("class_mask_attention")
    so = onnx_mlir_py.compile(path, str(tmp_path / "mask_attention.so"))
    sess = onnx_mlir_py.ExecutionSession(so)
    model = onnx.load(path)
    for i, dims in enumerate(RUN_DIMS["mask_attention"]):
        feeds = _feeds("mask_attention", dims, i + 1)
        got = sess.run([feeds[v.name] for v in model.graph.input])
        expected = reference(model, feeds, engine="onnxruntime")
        assert_match(got, expected, 1e-5, 1e-5)
