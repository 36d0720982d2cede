"""String class labels of scikit-learn classifiers (passes/onnx_to_linalg/
ml_outputs.py): the library returns label indices, the Python runtime the
label strings, as onnxruntime (numpy arrays of str objects), with and
without ZipMap; a string label tensor feeding another node is refused."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_helpers import compile_model, ort_run

pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.ensemble import RandomForestClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

OPSETS = {"": 18, "ai.onnx.ml": 3}


def _data(names):
    x, y = make_classification(120, 4, n_informative=3, n_redundant=0,
                               n_classes=len(names), random_state=0)
    return x.astype(np.float32), np.array(names)[y]


@pytest.mark.parametrize("names", [["cat", "dog", "emu"], ["no", "yes"]])
@pytest.mark.parametrize("kind", ["forest", "logistic"])
@pytest.mark.parametrize("zipmap", [False, True])
def test_string_labels(tmp_path, names, kind, zipmap):
    x, y = _data(names)
    m = (RandomForestClassifier(4, max_depth=4, random_state=0) if kind == "forest"
         else LogisticRegression(max_iter=300)).fit(x, y)
    model = skl2onnx.to_onnx(m, x[:1], options={"zipmap": zipmap}, target_opset=OPSETS)
    sess = compile_model(model, tmp_path / "m.so")
    for n in (1, 7):
        got, want = sess.run([x[:n]]), ort_run(model, {"X": x[:n]})
        assert got[0].dtype == object and got[0].shape == (n,)
        assert got[0].tolist() == want[0].tolist()
        if zipmap:
            assert [list(d) for d in got[1]] == [list(d) for d in want[1]]
            np.testing.assert_allclose([list(d.values()) for d in got[1]],
                                       [list(d.values()) for d in want[1]], rtol=1e-6)
        else:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)


def test_string_labels_feeding_another_node_are_refused(tmp_path):
    from onnx_mlir_py.errors import OnnxMlirError
    nodes = [helper.make_node("LinearClassifier", ["X"], ["L", "S"], domain="ai.onnx.ml",
                              name="clf", coefficients=[1.0, -1.0, 0.5, 2.0],
                              intercepts=[0.0, 0.1], classlabels_strings=["a", "b"]),
             helper.make_node("LabelEncoder", ["L"], ["Y"], domain="ai.onnx.ml", name="enc",
                              keys_strings=["a", "b"], values_int64s=[7, 9])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                     ["N", 2])],
                          [helper.make_tensor_value_info("Y", TensorProto.INT64, ["N"])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18),
                                                helper.make_opsetid("ai.onnx.ml", 2)])
    with pytest.raises(OnnxMlirError, match="'clf'.*string"):
        compile_model(model, tmp_path / "m.so")
