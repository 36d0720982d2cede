"""String ops, ai.onnx.ml ops, training optimizers, windows against onnx."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model
from _common import F, i64, one

S = TP.STRING


def _ml_model(nodes, inputs, outputs, extra_domain, version):
    m = make_model(nodes, inputs, outputs, 21)
    m.opset_import.append(helper.make_opsetid(extra_domain, version))
    return m


def test_string_ops():
    nodes = [helper.make_node("StringSplit", ["s"], ["parts", "n"], name="sp"),
             helper.make_node("StringConcat", ["s", "s"], ["cat"], name="c"),
             helper.make_node("RegexFullMatch", ["s"], ["m"], name="r", pattern="a.*")]
    infer_and_compare(make_model(nodes, [("s", S, [2, 3])], ["parts", "n", "cat", "m"], 20))


@pytest.mark.parametrize("values", [{"values_int64s": [1, 2]},
                                    {"values_strings": ["a", "b"]},
                                    {"values_floats": [1.0, 2.0]}])
def test_label_encoder(values):
    node = helper.make_node("LabelEncoder", ["x"], ["y"], name="l", domain="ai.onnx.ml",
                            keys_int64s=[3, 4], **values)
    infer_and_compare(_ml_model([node], [("x", TP.INT64, [5])], ["y"], "ai.onnx.ml", 4))


def test_ml_binarizer_and_array_feature_extractor():
    b = helper.make_node("Binarizer", ["x"], ["b"], name="b", domain="ai.onnx.ml")
    a = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["a"], name="a",
                         domain="ai.onnx.ml")
    m = _ml_model([b, a], [("x", F, [3, 4]), ("i", TP.INT64, [2])], ["b", "a"],
                  "ai.onnx.ml", 1)
    infer_and_compare(m)


def test_training_optimizers():
    tr = "ai.onnx.preview.training"
    ins = [("r", F, []), ("t", TP.INT64, []), ("x", F, [2, 3]), ("g", F, [2, 3]),
           ("v", F, [2, 3]), ("h", F, [2, 3])]
    mom = helper.make_node("Momentum", ["r", "t", "x", "g", "v"], ["x2", "v2"], name="m",
                           domain=tr, alpha=0.9, beta=0.1, mode="standard",
                           norm_coefficient=0.0)
    adam = helper.make_node("Adam", ["r", "t", "x", "g", "v", "h"], ["x3", "v3", "h3"],
                            name="a", domain=tr)
    infer_and_compare(_ml_model([mom, adam], ins, ["x2", "v2", "x3", "v3", "h3"], tr, 1))


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
def test_windows(op):
    infer_and_compare(one(op, None, 17, [i64("n", 10)], inputs=["n"]))
