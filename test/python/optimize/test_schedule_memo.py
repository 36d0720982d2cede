"""passes/optimize/schedule_memo.py (#29): a packed contraction's schedule
runs once per distinct kernel and its result is replayed on the copies.

What can go wrong, and what each test checks:
- a copy that keeps the first kernel's weights (or its bias) computes the
  first kernel's product: a chain of matmul + bias + ReLU kernels of one
  shape, each with its own weights and bias, runs against onnxruntime, and
  the copies were replayed (not run), at 1 and 2 threads;
- a replay that differs from what the schedule would have made: the
  library's LLVM IR with the memo on equals the one with it off;
- kernels that differ (another shape, another epilogue) must not share a
  result: they run their own schedule.
"""
from __future__ import annotations

import numpy as np
import onnx.helper as h
import onnx.numpy_helper as nh
import pytest
from onnx import TensorProto as T

import onnx_mlir_py
from onnx_mlir_py.passes.optimize import schedule_memo
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match, reference


def _chain(n: int = 4, m: int = 64, k: int = 128, last: int = 96, seed: int = 0):
    """x [m, k] -> n x (MatMul [k, k] + bias + ReLU, own weights) -> MatMul
    [k, last] + bias (another shape, no ReLU)."""
    rng = np.random.default_rng(seed)
    nodes, inits, cur = [], [], "x"
    for i in range(n + 1):
        cols = k if i < n else last
        w = (rng.standard_normal((k, cols)) / np.sqrt(k)).astype(np.float32)
        b = rng.standard_normal(cols).astype(np.float32)
        inits += [nh.from_array(w, f"w{i}"), nh.from_array(b, f"b{i}")]
        nodes += [h.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"]),
                  h.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}" if i < n else "y"])]
        if i < n:
            nodes.append(h.make_node("Relu", [f"a{i}"], [f"r{i}"]))
            cur = f"r{i}"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [m, k])],
                     [h.make_tensor_value_info("y", T.FLOAT, [m, last])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.fixture
def counted(monkeypatch):
    calls = {"capture": 0, "replay": 0}
    cap, rep = schedule_memo.capture, schedule_memo.replay

    def capture(*a):
        calls["capture"] += 1
        return cap(*a)

    def replay(*a):
        calls["replay"] += 1
        return rep(*a)
    monkeypatch.setattr(schedule_memo, "capture", capture)
    monkeypatch.setattr(schedule_memo, "replay", replay)
    return calls


@pytest.mark.parametrize("threads", [1, 2])
def test_copies_replayed_on_their_own_weights(tmp_path, counted, threads):
    model = _chain()
    so = onnx_mlir_py.compile(model, output=str(tmp_path / "m.so"), opt_level=3)
    # four kernels of one text (one run, three replays), the last its own
    assert counted == {"capture": 2, "replay": 3}, counted
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    got = ExecutionSession(so, num_threads=threads).run([x])
    assert_match(got, reference(model, {"x": x}, "onnxruntime"), rtol=1e-4, atol=1e-4)


def test_replay_is_the_schedules_own_ir(tmp_path, monkeypatch, counted):
    model = _chain(n=3)
    on = onnx_mlir_py.compile(model, output=str(tmp_path / "on.ll"), opt_level=3,
                              emit="EmitLLVMIR")
    assert counted["replay"] == 2
    monkeypatch.setenv(schedule_memo.ENV, "0")
    off = onnx_mlir_py.compile(model, output=str(tmp_path / "off.ll"), opt_level=3,
                               emit="EmitLLVMIR")
    assert counted["replay"] == 2                     # none more with the memo off
    assert open(on).read() == open(off).read()
