"""Declared types that contradict inference (graph outputs, value_info):
one DeclaredTypeWarning naming the value and both types, the inferred type
wins (function signature and output signature JSON too), and the model runs
and matches onnxruntime, as onnxruntime runs such models with a warning."""
import json
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import DeclaredTypeWarning
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from test_cli import cli


def _model(nodes, inputs, outputs, value_info=(), inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, initializer=list(inits),
                     value_info=list(value_info))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _crnn_like():
    """A dynamic sequence [n, 1, 16] -> MatMul -> Softmax -> [n, 1, 8], whose
    output is declared rank 2 [1, seqlen] (as a real CRNN recogniser does)."""
    w = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    return _model(
        [h.make_node("MatMul", ["x", "w"], ["mm"], name="mm"),
         h.make_node("Softmax", ["mm"], ["y"], name="softmax", axis=-1)],
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 1, 16])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, "seqlen"])],
        inits=[onnx.numpy_helper.from_array(w, "w")])


def _compile(model, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        so = onnx_mlir_py.compile(model, output=str(tmp_path / "m.so"), opt_level=1)
    return so, [w for w in caught if issubclass(w.category, DeclaredTypeWarning)]


def _ours_vs_ort(model, so, feeds):
    sess = onnx_mlir_py.ExecutionSession(so)
    ref = ort.InferenceSession(model.SerializeToString())
    for feed in feeds:
        got = sess.run(list(feed.values()))
        want = ref.run(None, feed)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    return sess


def test_wrong_declared_output_rank_warns_and_runs(tmp_path):
    model = _crnn_like()
    so, warned = _compile(model, tmp_path)
    assert len(warned) == 1
    msg = str(warned[0].message)
    assert "'y'" in msg and "tensor<1x?xf32>" in msg and "tensor<?x1x8xf32>" in msg
    rng = np.random.default_rng(1)
    sess = _ours_vs_ort(model, so, [{"x": rng.standard_normal((n, 1, 16)).astype(np.float32)}
                                    for n in (20, 3)])
    # the signature follows the inferred type: rank 3, not the declared rank 2
    assert json.loads(sess.output_signature())[0]["dims"] == [-1, 1, 8]


def test_contradicting_value_info_warns_once_and_runs(tmp_path):
    """'t' is declared [7] but is [2, 3]: one warning for 't' only (types
    after it are not inferred from the wrong declaration)."""
    model = _model(
        [h.make_node("Relu", ["x"], ["t"], name="relu"),
         h.make_node("Neg", ["t"], ["u"], name="neg"),
         h.make_node("Add", ["u", "x"], ["y"], name="add")],
        [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        value_info=[h.make_tensor_value_info("t", T.FLOAT, [7])])
    so, warned = _compile(model, tmp_path)
    assert [str(w.message) for w in warned] == [
        "value 't' (output #0 of node 'relu', Relu): declared tensor<7xf32>, "
        "inferred tensor<2x3xf32>; using the inferred type"]
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    _ours_vs_ort(model, so, [{"x": x}])


def test_wrong_declared_element_type_warns(tmp_path):
    model = _model([h.make_node("Relu", ["x"], ["y"], name="relu")],
                   [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
                   [h.make_tensor_value_info("y", T.INT64, ["n"])])
    module = import_model(model)
    with pytest.warns(DeclaredTypeWarning, match=r"declared tensor<\?xi64>, inferred "
                                                 r"tensor<\?xf32>"):
        to_onnx_ir(module)
    assert "-> (tensor<?xf32>" in str(module)


def test_declared_static_dim_does_not_replace_a_dynamic_one():
    """A Reshape to a run-time shape: inference gives [?, ?]; the declared
    [2, 3] is consistent, so no warning, but the run-time shape wins (as in
    onnxruntime): the result stays [?, ?] (test_declared_output_types runs
    such models at several shapes)."""
    model = _model([h.make_node("Reshape", ["x", "s"], ["y"], name="r")],
                   [h.make_tensor_value_info("x", T.FLOAT, [6]),
                    h.make_tensor_value_info("s", T.INT64, [2])],
                   [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    module = import_model(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeclaredTypeWarning)
        to_onnx_ir(module)
    text = str(module)
    assert "-> (tensor<?x?xf32>" in text and "onnx.declared" not in text


def test_cli_prints_one_warning_line(tmp_path):
    path = tmp_path / "crnn.onnx"
    onnx.save(_crnn_like(), str(path))
    r = cli(path, "--EmitONNXIR", "--printIR")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines == ["warning: value 'y' (output #0 of node 'softmax', Softmax): declared "
                     "tensor<1x?xf32>, inferred tensor<?x1x8xf32>; using the inferred type"]
    assert "-> (tensor<?x1x8xf32>" in r.stdout
