"""Dynamic matmuls of the same shapes share one kernel function
(passes/optimize/matmul_dyn_text.py, ``shared_kernel``): a stack of layers
with a dynamic row count (batch x sequence), weights of the same shape in
every layer, compiled once and run against onnxruntime at row counts below
one row block, a whole number of them, and whole blocks plus a remainder.
A weight whose N is not whole column blocks keeps its own inlined kernel."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.options import Options
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match
from test_o3_numerics import compile_with_ort

LAYERS = 3
D, F, V = 64, 128, 50          # V: not whole 32-column blocks


def _stack() -> "onnx.ModelProto":  # noqa: F821
    """x [batch, seq, D] -> LAYERS x (x + relu(x @ W1_i + b) @ W2_i) -> @ Wv [.., V]."""
    rng = np.random.default_rng(3)
    nodes, inits = [], []
    x = "x"
    for i in range(LAYERS):
        for name, shape in ((f"w1_{i}", (D, F)), (f"w2_{i}", (F, D)), (f"b_{i}", (F,))):
            inits.append(nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name))
        nodes += [h.make_node("MatMul", [x, f"w1_{i}"], [f"h{i}"]),
                  h.make_node("Add", [f"h{i}", f"b_{i}"], [f"hb{i}"]),
                  h.make_node("Relu", [f"hb{i}"], [f"r{i}"]),
                  h.make_node("MatMul", [f"r{i}", f"w2_{i}"], [f"o{i}"]),
                  h.make_node("Add", [x, f"o{i}"], [f"x{i}"])]
        x = f"x{i}"
    inits.append(nh.from_array(rng.standard_normal((D, V)).astype(np.float32), "wv"))
    nodes.append(h.make_node("MatMul", [x, "wv"], ["y"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", D])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", V])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _o3_text(model) -> str:
    """The module after -O3 (what ``--printIR`` prints for a library)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run_pipeline(model, Options(emit="EmitLib", opt_level=3, march="x86-64-v4"), None,
                     print_ir=True)
    return out.getvalue()


def test_same_shapes_share_one_kernel():
    text = _o3_text(_stack())
    kernels = [line for line in text.splitlines() if "func.func private @__om_matmul_" in line]
    # one kernel per shape ([D, F] and [F, D]); the [D, V] matmul is inlined
    assert len(kernels) == 2, kernels
    for line in kernels:
        name = line.split("@")[1].split("(")[0]
        assert name.endswith("_kernel"), name
        assert text.count(f"call @{name}(") == LAYERS, name
    # the weights were packed at compile time, outside the kernels
    assert "linalg.pack" not in text


@pytest.mark.parametrize("batch,seq", [(1, 1), (2, 1), (2, 8), (3, 7)])
def test_shared_kernels_match_onnxruntime(tmp_path_factory, batch, seq):
    so, ort_sess = _compiled(tmp_path_factory)
    x = np.random.default_rng(batch * 10 + seq).standard_normal((batch, seq, D)).astype(np.float32)
    got = ExecutionSession(so, num_threads=2).run([x])
    assert_match(got, ort_sess.run(None, {"x": x}), 1e-4, 1e-4)


_cache: dict = {}


def _compiled(tmp_path_factory):
    """The stack compiled once for all shapes of the test above."""
    if "so" not in _cache:
        _cache["so"] = compile_with_ort(tmp_path_factory.mktemp("shared"), _stack())
    return _cache["so"]


def test_batched_constant_b_shares_one_kernel(tmp_path):
    """Two batch_matmuls x [2, seq, 16] @ W_i [2, 16, 64] (constant, packed per
    batch) call one kernel; outputs match onnxruntime at three lengths."""
    rng = np.random.default_rng(5)
    inits = [nh.from_array(rng.standard_normal((2, 16, 64)).astype(np.float32), f"w{i}")
             for i in range(2)]
    nodes = [h.make_node("MatMul", ["x", "w0"], ["m0"]), h.make_node("MatMul", ["x", "w1"], ["m1"]),
             h.make_node("Add", ["m0", "m1"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2, "seq", 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, "seq", 64])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    text = _o3_text(model)
    kernels = [line for line in text.splitlines() if "func.func private @__om_matmul_" in line]
    assert len(kernels) == 1 and "_kernel(" in kernels[0], kernels
    so, ort_sess = compile_with_ort(tmp_path, model)
    sess = ExecutionSession(so, num_threads=1)
    for seq in (1, 8, 13):
        x = rng.standard_normal((2, seq, 16)).astype(np.float32)
        assert_match(sess.run([x]), ort_sess.run(None, {"x": x}), 1e-4, 1e-4)
