"""TensorScatter: our shape inference against onnx's, and the verifier's
one-line errors naming the node."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError
from _common import F


def _ts(cache, upd, wi=None, **attrs):
    ins = [("past", F, cache), ("upd", F, upd)]
    if wi is not None:
        ins.append(("w", TP.INT64, wi))
    node = helper.make_node("TensorScatter", [n for n, _, _ in ins], ["y"], name="ts", **attrs)
    return make_model([node], ins, ["y"], 24)


@pytest.mark.parametrize("attrs", [{}, {"axis": 1}, {"mode": "circular", "axis": -1}])
def test_shape(attrs):
    upd = {None: [2, 3, 1, 4], 1: [2, 1, 8, 4], -1: [2, 3, 8, 2]}[attrs.get("axis")]
    infer_and_compare(_ts([2, 3, 8, 4], upd, [2], **attrs))


@pytest.mark.parametrize("model, message", [
    (_ts([2, 8, 4], [2, 1, 4], mode="ring"),
     "attribute 'mode' = 'ring': expected 'linear' or 'circular'"),
    (_ts([2, 8, 4], [2, 1, 4], axis=3), r"attribute 'axis' = 3: expected a value in \[-2, 2\]"),
    (_ts([2, 8, 4], [2, 1, 4], axis=0), "attribute 'axis' = 0: .* other than 0"),
    (_ts([2, 8, 4], [2, 1, 4, 1]), "update has rank 4 but past_cache has rank 3"),
    (_ts([2, 8, 4], [2, 1, 5]), "update dim 2 is 5 but past_cache dim 2 is 4"),
    (_ts([2, 8, 4], [2, 9, 4]), "update's sequence length 9 .axis 1. exceeds past_cache's 8"),
    (_ts([2, 8, 4], [2, 1, 4], [2, 1]), r"write_indices must be 1-D, got shape \[2, 1\]"),
    (_ts([2, 8, 4], [2, 1, 4], [3]), "write_indices has 3 elements for a batch of 2"),
])
def test_verifier(model, message):
    with pytest.raises(VerificationError, match=f"node 'ts' \\(TensorScatter\\): {message}"):
        our_output_types(model)
