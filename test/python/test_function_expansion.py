"""Ops without a lowering are compiled through their ONNX function bodies."""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.pipeline import run_passes
from onnx_mlir_py.registry import has_lowering
from onnx_mlir_py.runtime import ExecutionSession


def _sce_model():
    # SoftmaxCrossEntropyLoss has a context-dependent function body and no
    # lowering rule of its own; HannWindow's body reads a defaulted attribute.
    nodes = [h.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                         reduction="mean", name="sce"),
             h.make_node("HannWindow", ["size"], ["win"], name="hann")]
    g = h.make_graph(nodes, "g",
                     [h.make_tensor_value_info("scores", T.FLOAT, [3, 5]),
                      h.make_tensor_value_info("labels", T.INT64, [3]),
                      h.make_tensor_value_info("size", T.INT64, [])],
                     [h.make_tensor_value_info("loss", T.FLOAT, []),
                      h.make_tensor_value_info("win", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _expanded_ops(m) -> set[str]:
    """The ONNX op types after import and the pass ``expand-functions``."""
    module = import_model(m)
    run_passes(module, ["expand-functions"])
    return {OnnxOp(op).op_type for op in walk_ops(module, is_onnx_op)}


def test_unlowered_ops_compile_through_their_function_bodies(tmp_path):
    assert not has_lowering("", "SoftmaxCrossEntropyLoss", 13)
    m = _sce_model()
    rng = np.random.default_rng(0)
    feeds = {"scores": rng.standard_normal((3, 5)).astype(np.float32),
             "labels": np.array([0, 4, 2], np.int64), "size": np.array(8, np.int64)}
    want = ReferenceEvaluator(m).run(None, feeds)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "sce.so", opt_level=0))
    got = sess.run([feeds["scores"], feeds["labels"], feeds["size"]])
    for g_, w in zip(got, want):
        np.testing.assert_allclose(g_, w, rtol=1e-5, atol=1e-6)


def test_expansion_replaces_only_ops_without_lowering():
    m = _sce_model()
    m.graph.node.append(h.make_node("LayerNormalization", ["scores", "g", "b"], ["ln"]))
    m.graph.initializer.extend([onnx.numpy_helper.from_array(np.ones(5, np.float32), "g"),
                                onnx.numpy_helper.from_array(np.zeros(5, np.float32), "b")])
    m.graph.output.append(h.make_tensor_value_info("ln", T.FLOAT, [3, 5]))
    ops = _expanded_ops(m)
    assert "SoftmaxCrossEntropyLoss" not in ops and "HannWindow" not in ops
    assert "LayerNormalization" in ops          # it has a lowering of its own
    assert {"ReduceMean", "Cos"} & ops          # pieces of the bodies


def test_onnx_ir_keeps_the_ops_themselves():
    text = str(import_model(_sce_model()))
    assert "onnx.softmax_cross_entropy_loss" in text and "onnx.hann_window" in text


def test_context_dependent_body_of_an_op_reading_an_initializer(tmp_path):
    """The body of a context-dependent function depends on its inputs' types;
    an initializer that is not also a graph input (IR >= 4) has its type
    from the initializer itself (it used to be unknown: no expansion)."""
    rng = np.random.default_rng(1)
    scores = onnx.numpy_helper.from_array(rng.standard_normal((3, 5)).astype(np.float32),
                                          "scores")
    g = h.make_graph([h.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                                  reduction="sum", name="sce")], "g",
                     [h.make_tensor_value_info("labels", T.INT64, [3])],
                     [h.make_tensor_value_info("loss", T.FLOAT, [])], [scores])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    assert "SoftmaxCrossEntropyLoss" not in _expanded_ops(m)
    labels = np.array([1, 0, 4], np.int64)
    (want,) = ReferenceEvaluator(m).run(None, {"labels": labels})
    (got,) = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)).run(
        [labels])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
