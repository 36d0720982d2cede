"""TfIdfVectorizer shape rule against onnx's shape inference ([C] -> [K],
[N, C] -> [N, K]); other ranks are refused naming the node."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model

ATTRS = dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
             ngram_counts=[0], ngram_indexes=[0, 1, 3, 2], pool_int64s=[2, 3, 5, 4])


@pytest.mark.parametrize("shape", [[2, 6], [6], ["n", "c"], ["c"]])
def test_tfidf_shapes(shape):
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="t", **ATTRS)
    infer_and_compare(make_model([node], [("x", TP.INT64, shape)], ["y"], 9))


def test_tfidf_rank3_refused(tmp_path):
    import onnx_mlir_py
    from onnx_mlir_py.errors import OnnxMlirError
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="t3", **ATTRS)
    with pytest.raises(OnnxMlirError, match="t3.*rank 3"):
        onnx_mlir_py.compile(make_model([node], [("x", TP.INT64, [1, 2, 3])], ["y"], 9),
                             tmp_path / "m", emit="EmitONNXIR")
