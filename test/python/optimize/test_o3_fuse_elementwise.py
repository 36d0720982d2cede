"""Elementwise fusion in bounded groups (passes/optimize/fuse_elementwise.py):
a long chain of elementwise ops is fused into groups of at most
MAX_GROUP_WEIGHT weighted body ops (it was one loop of every op, whose one
basic block took llc super-linear time: issue #29), the barrier calls that
cut the groups are gone afterwards, short chains still fuse into one loop,
and the compiled chain agrees with onnxruntime."""
from __future__ import annotations

import os
import sys

import numpy as np
import onnx
import pytest

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.pipeline import run_passes, to_onnx_ir
from onnx_mlir_py.runtime import ExecutionSession

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import compile_time  # noqa: E402  (the compile-time benchmark's chain model)

def _fused_module(n: int):
    """(fuse_elementwise module, the lowered chain after fusion, the summed
    body weight of its generics before fusion)."""
    import onnx_mlir_py.passes.optimize  # noqa: F401
    fe = sys.modules["onnx_mlir_py.passes.optimize.fuse_elementwise"]
    from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
    module = import_model(compile_time.chain_model(n))
    to_onnx_ir(module)
    lower_to_linalg(module)
    before = sum(_weights(fe, module))
    with module.context:
        fe.fuse_elementwise(module)
    return fe, module, before


def _weights(fe, module):
    return [fe._body_weight(op) for op in walk_ops(module.operation, "linalg.generic")
            if fe._all_parallel(op)]


def test_long_chain_is_cut_into_bounded_groups():
    fe, module, before = _fused_module(200)        # 100 Add/Mul + 100 Tanh/Sigmoid
    w = _weights(fe, module)
    assert before > 10 * fe.MAX_GROUP_WEIGHT
    assert len(w) >= before // fe.MAX_GROUP_WEIGHT and max(w) <= fe.MAX_GROUP_WEIGHT
    assert len(w) < 200 // 4                       # ... and still fused (groups of many ops)
    assert "__om_fusion_barrier" not in str(module)   # the barriers are gone


def test_short_chain_is_one_loop():
    fe, module, _ = _fused_module(8)
    assert len(_weights(fe, module)) == 1


@pytest.mark.parametrize("n", [9, 150])
def test_chain_matches_onnxruntime(tmp_path, n):
    ort = pytest.importorskip("onnxruntime")
    m = compile_time.chain_model(n)
    path = tmp_path / "chain.onnx"
    onnx.save(m, path)
    sess = ExecutionSession(onnx_mlir_py.compile(str(path), output=tmp_path / "c.so",
                                                 opt_level=3))
    x = np.random.default_rng(n).standard_normal((64, 256)).astype(np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None,
                                                                                  {"x": x})[0]
    np.testing.assert_allclose(sess.run([x])[0], want, rtol=1e-4, atol=1e-5)
