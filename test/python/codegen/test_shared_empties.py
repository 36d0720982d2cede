"""codegen/bufferize.split_shared_empties: a tensor.empty that CSE made the
init of many independent ops is copied per user before the one-shot
analysis (with one shared empty, a 1,000-op elementwise chain at -O2 spent
208 s in bufferization: every write in one alias set). Few users keep the
shared value. Results must not change: checked against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import mlir.ir as ir

from onnx_mlir_py.codegen import bufferize as B
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.testing.check import assert_match, reference


def _ir(n_users: int) -> str:
    body = "\n".join(
        f"  %r{i} = linalg.fill ins(%c{i} : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>"
        for i in range(n_users))
    consts = "\n".join(f"  %c{i} = arith.constant {i}.0 : f32" for i in range(n_users))
    rets = ", ".join(f"%r{i}" for i in range(n_users))
    types = ", ".join(["tensor<8xf32>"] * n_users)
    return f"""
func.func @main_graph() -> ({types}) {{
  %e = tensor.empty() : tensor<8xf32>
{consts}
{body}
  return {rets} : {types}
}}"""


@pytest.mark.parametrize("users, copies", [(40, 39), (B.SPLIT_MIN_USES, 0), (3, 0)])
def test_split_copies_only_widely_shared_empties(users, copies):
    with make_context():
        m = ir.Module.parse(_ir(users))
        assert B.split_shared_empties(m) == copies
        assert m.operation.verify()
        empties = walk_ops(m, "tensor.empty")
        assert len(empties) == 1 + copies
        if copies:
            assert all(len(list(e.results[0].uses)) == 1 for e in empties)


def _chain(n: int):
    rng = np.random.default_rng(0)
    c = nh.from_array((rng.standard_normal(16) * 0.5).astype(np.float32), "c")
    nodes, prev = [], "x"
    for i in range(n):
        kind = ("Add", "Mul", "Tanh", "Sigmoid")[i % 4]
        ins = [prev, "c"] if kind in ("Add", "Mul") else [prev]
        nodes.append(h.make_node(kind, ins, [f"v{i}"]))
        prev = f"v{i}"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [4, 16])],
                     [h.make_tensor_value_info(prev, TP.FLOAT, [4, 16])], [c])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), \
        {"x": rng.standard_normal((4, 16)).astype(np.float32)}


@pytest.mark.parametrize("opt", [0, 2])
def test_long_chain_splits_and_matches_onnxruntime(tmp_path, monkeypatch, opt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    made = []
    real = B.split_shared_empties
    monkeypatch.setattr(B, "split_shared_empties", lambda m: made.append(real(m)) or made[-1])
    m, feeds = _chain(80)
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=opt)
    assert made and made[0] > B.SPLIT_MIN_USES, made     # the ops' shared init was split
    got = ExecutionSession(so).run([feeds["x"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-5, atol=1e-6)
