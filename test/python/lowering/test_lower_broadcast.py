"""Binary ops whose dynamic dims are provably one value need no run-time
broadcast (passes/onnx_to_linalg/broadcast.py, same_dims): SiLU exported
as ``x * sigmoid(x)`` over [N, C, H, W] with dynamic N, H, W lowered to a
run-time branch per Mul (is a dim of either operand 1?), which kept the
Sigmoid and the Mul from fusing at -O3 (EfficientNet with dynamic H/W, #29).
The dims are traced through linalg results (a result's dims are its
init's), ``tensor.empty`` sizes and ``tensor.dim``; inputs of the graph are
independent, so ``x * y`` keeps its branch and still broadcasts a y whose
dim is 1 at run time. Against onnxruntime at -O0 and -O3."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession


def _model(two_inputs: bool):
    ins = [h.make_tensor_value_info("x", T.FLOAT, ["N", 4, "H", "W"])]
    nodes = [h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["x", "s"], ["silu"])]
    if two_inputs:
        ins.append(h.make_tensor_value_info("y", T.FLOAT, ["M", 4, "P", "Q"]))
        nodes.append(h.make_node("Mul", ["silu", "y"], ["out"]))
    else:
        nodes.append(h.make_node("Relu", ["silu"], ["out"]))
    g = h.make_graph(nodes, "g", ins, [h.make_tensor_value_info("out", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _branches(model, tmp_path) -> int:
    path = onnx_mlir_py.compile(model, output=tmp_path / "m.mlir", emit="EmitMLIR")
    return sum(" = scf.if " in ln for ln in open(path).read().splitlines())


def test_silu_has_no_runtime_broadcast(tmp_path):
    assert _branches(_model(False), tmp_path) == 0


def test_independent_inputs_keep_the_runtime_broadcast(tmp_path):
    assert _branches(_model(True), tmp_path) > 0


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("two_inputs", [False, True])
def test_against_onnxruntime(tmp_path, opt, two_inputs):
    m = _model(two_inputs)
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=opt)
    sess = ExecutionSession(so)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    for shape, yshape in [((1, 4, 5, 7), (1, 4, 5, 7)), ((2, 4, 9, 33), (2, 4, 1, 33)),
                          ((3, 4, 1, 1), (1, 4, 1, 1))]:
        feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
        if two_inputs:
            feeds["y"] = rng.standard_normal(yshape).astype(np.float32)
        want = ref.run(None, feeds)[0]
        got = sess.run(list(feeds.values()))[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
