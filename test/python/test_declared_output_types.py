"""A graph output (or a value_info) declared with a static dim where inference
gives a dynamic one (torch's dynamo exporter declares an RNN's output and the
values after it [batch, 8, H]: the export-time sequence length) must follow
the run-time shape, as onnxruntime does (it warns and returns the actual shape).

The declared static dim is ignored where inference leaves the dim dynamic
(passes/shape_inference.apply_declared); compile and run happen in child
processes in case a regression makes the compiled code read past a buffer.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.isolated import compile_isolated, run_isolated

SHAPES = [(1, 5, 4), (2, 11, 4), (2, 8, 4)]
B = nh.from_array(np.arange(4, dtype=np.float32), "b")
NODES = {
    "identity": ([h.make_node("Identity", ["x"], ["y"])], []),
    "add_bias": ([h.make_node("Add", ["x", "b"], ["y"])], [B]),   # the LSTM export's last node
    "value_info": None,             # see _model
}
def _model(name):
    if name == "value_info":        # an intermediate declared [N, 8, 4], the output [N, S, 4]
        g = h.make_graph([h.make_node("Transpose", ["x"], ["t"], perm=[0, 1, 2]),
                          h.make_node("Neg", ["t"], ["y"])], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, ["N", "S", 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["N", "S", 4])],
                         value_info=[h.make_tensor_value_info("t", T.FLOAT, ["N", 8, 4])])
    else:
        nodes, inits = NODES[name]
        g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", "S", 4])],
                         [h.make_tensor_value_info("y", T.FLOAT, ["N", 8, 4])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _param(name, opt):
    return pytest.param(name, opt, id=f"{name}-O{opt}")


@pytest.mark.parametrize("name,opt", [_param(n, o) for n in sorted(NODES) for o in (0, 3)])
def test_declared_static_output_dim_follows_run_time_shape(tmp_path, name, opt):
    m = _model(name)
    so = compile_isolated(m, tmp_path / "m.so", opt)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    outs = run_isolated(so, [[x] for x in xs])
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for x, (got,) in zip(xs, outs):
        (want,) = sess.run(None, {"x": x})
        assert got.shape == want.shape, f"got {got.shape}, expected {want.shape}"
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
