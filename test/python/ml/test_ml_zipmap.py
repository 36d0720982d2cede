"""ZipMap on a graph output: the library returns the scores, the Python
runtime (ExecutionSession, InferenceSession) the list of {label: score}
dicts onnxruntime returns; ZipMap feeding another node is refused."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import compile_model, ort_run

pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")


def _same_dicts(got, want):
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w)
        np.testing.assert_allclose([g[k] for k in w], [w[k] for k in w], rtol=1e-6)


@pytest.mark.parametrize("kind", ["forest", "logistic"])
def test_sklearn_classifier_with_zipmap(tmp_path, kind):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    x, y = make_classification(150, 5, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    x = x.astype(np.float32)
    m = (RandomForestClassifier(4, max_depth=4, random_state=0) if kind == "forest"
         else LogisticRegression(max_iter=300)).fit(x, y)
    model = skl2onnx.to_onnx(m, x[:1], target_opset={"": 18, "ai.onnx.ml": 3})
    assert model.graph.node[-1].op_type == "ZipMap"
    sess = compile_model(model, tmp_path / "m.so")
    assert '"zipmap": [0, 1, 2]' in sess.output_signature()
    for n in (1, 6):
        xx = x[:n]
        got, want = sess.run([xx]), ort_run(model, {"X": xx})
        np.testing.assert_array_equal(got[0], want[0])
        _same_dicts(got[1], want[1])
    from onnx_mlir_py.inference import InferenceSession
    got = InferenceSession(model.SerializeToString()).run(None, {"X": x[:4]})
    _same_dicts(got[1], ort_run(model, {"X": x[:4]})[1])


def _zipmap_model(**labels):
    nodes = [helper.make_node("ZipMap", ["S"], ["Z"], domain="ai.onnx.ml", name="zm", **labels)]
    key = TensorProto.STRING if "classlabels_strings" in labels else TensorProto.INT64
    out = helper.make_value_info("Z", helper.make_sequence_type_proto(
        helper.make_map_type_proto(key, helper.make_tensor_type_proto(TensorProto.FLOAT, None))))
    g = helper.make_graph(nodes, "z", [helper.make_tensor_value_info("S", TensorProto.FLOAT,
                                                                     ["N", 2])], [out])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                               helper.make_opsetid("ai.onnx.ml", 1)])


def test_string_labels(tmp_path):
    model = _zipmap_model(classlabels_strings=["cat", "dog"])
    s = np.array([[0.25, 0.75], [1.0, 0.0]], np.float32)
    got = compile_model(model, tmp_path / "m.so").run([s])[0]
    _same_dicts(got, ort_run(model, {"S": s})[0])
