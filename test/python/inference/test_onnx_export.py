"""The ONNX dialect exported back to ONNX (optimized_model_filepath =
"x.onnx"): for the drop-in script's models at -O0 and -O3, the exported
graph is a valid ONNX model with the same inputs and outputs, and
onnxruntime computes the same results on it as on the input model, at each
dims setting (two shapes where dims are symbolic)."""
import numpy as np
import onnx
import onnxruntime
import pytest

from onnx_mlir_py.inference.compiled import _onnx_ir
from onnx_mlir_py.inference.onnx_export import export
from _models import script_models


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("name", list(script_models()))
def test_exported_graph_runs_in_onnxruntime_with_the_same_results(name, opt_level):
    model, settings = script_models()[name]
    module, _ = _onnx_ir(model.SerializeToString(), opt_level)
    exported, why = export(module)
    assert exported is not None, why
    onnx.checker.check_model(exported)
    a, b = (onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
            for m in (model, exported))
    assert [(i.name, i.shape, i.type) for i in a.get_inputs()] == \
        [(i.name, i.shape, i.type) for i in b.get_inputs()]
    assert [o.name for o in a.get_outputs()] == [o.name for o in b.get_outputs()]
    rng = np.random.default_rng(0)
    for dims in settings:
        feed = {}
        for i in a.get_inputs():
            shape = [d if isinstance(d, int) else dims[d] for d in i.shape]
            feed[i.name] = rng.standard_normal(shape).astype(np.float32) \
                if i.type == "tensor(float)" else rng.integers(0, 4, shape).astype(np.int64)
        for x, y in zip(a.run(None, feed), b.run(None, feed)):
            np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-4)


def test_a_subgraph_is_not_exported():
    from onnx import TensorProto as T
    from onnx import helper as h
    branch = lambda v: h.make_graph(  # noqa: E731
        [h.make_node("Constant", [], ["o"], value=h.make_tensor("c", T.FLOAT, [1], [v]))],
        "b", [], [h.make_tensor_value_info("o", T.FLOAT, [1])])
    g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=branch(1.0),
                                  else_branch=branch(2.0))], "if",
                     [h.make_tensor_value_info("c", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    exported, why = export(_onnx_ir(m.SerializeToString(), 0)[0])
    assert exported is None and "subgraph" in why
