"""-O3 conv with its bias fused into the kernel call, when the bias is a
run-time input of dynamic length (fuzz case s2001-2: the call was placed at
the conv, before the broadcast of the bias it reads: "operand #2 does not
dominate this use")."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from onnx_mlir_py.testing.check import assert_match, reference, run_compiled


@pytest.mark.parametrize("kw", [dict(pads=[2, 0, 0, 2], strides=[2, 3]), dict()])
def test_conv_with_a_dynamic_bias_input(kw):
    rng = np.random.default_rng(0)
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["y"], **kw),
                      h.make_node("Conv", ["x2", "w2"], ["y2"], group=2, pads=[2, 0, 1, 2])],
                     "g",
                     [h.make_tensor_value_info("b", TP.FLOAT, ["n"]),
                      h.make_tensor_value_info("x", TP.FLOAT, [6, 4, 4, 3]),
                      h.make_tensor_value_info("x2", TP.FLOAT, [4, 2, 2, 4])],
                     [h.make_tensor_value_info("y2", TP.FLOAT, None),
                      h.make_tensor_value_info("y", TP.FLOAT, None)],
                     [h.make_tensor("w", TP.FLOAT, [2, 4, 2, 2],
                                    rng.standard_normal(32).tolist()),
                      h.make_tensor("w2", TP.FLOAT, [2, 1, 1, 2], rng.standard_normal(4).tolist())])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"b": rng.standard_normal(2).astype(np.float32),
             "x": rng.standard_normal((6, 4, 4, 3)).astype(np.float32),
             "x2": rng.standard_normal((4, 2, 2, 4)).astype(np.float32)}
    for opt in (0, 3):
        assert_match(run_compiled(m, feeds, opt), reference(m, feeds, "onnxruntime"),
                     rtol=1e-4, atol=1e-4)
