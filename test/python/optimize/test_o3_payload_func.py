"""The packed-contraction schedules run on their kernel's ops moved into a
function of their own (passes/optimize/payload_func.py, ``apply_to_ops(
group_for=...)``): a fusion's diagnostic prints its payload, numbering and
verifying the whole function around it, so in place each fusion cost
O(model) (YOLO: 42 kernels, 3.3 s; issue #29). The module after the step
must be the one the in-place runs make (same text), the temporary function
gone, and the model right against onnxruntime."""
from __future__ import annotations

import os
import tempfile

import mlir.ir as ir
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.context import make_context
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.target import target_for
from onnx_mlir_py.testing.check import assert_match, reference


def _model(batch=1):
    """Conv 1x1 + bias + SiLU (a bias init and a fused epilogue), a 3x3 conv
    + bias + residual Add + ReLU, a bias-only 1x1 conv of the same input as
    a second output (init 'rows_after'), a bias-free 1x1 conv + ReLU (zero
    init)."""
    rng = np.random.default_rng(3)

    def w(*s):
        return (rng.standard_normal(s) * 0.2).astype(np.float32)
    inits = [nh.from_array(a, n) for a, n in [
        (w(32, 16, 1, 1), "W1"), (w(32), "B1"), (w(32, 32, 3, 3), "W2"), (w(32), "B2"),
        (w(32, 16, 1, 1), "W3"), (w(32), "B3"), (w(32, 32, 1, 1), "W4")]]
    nodes = [
        h.make_node("Conv", ["x", "W1", "B1"], ["c1"]),
        h.make_node("Sigmoid", ["c1"], ["s1"]),
        h.make_node("Mul", ["c1", "s1"], ["a1"]),
        h.make_node("Conv", ["a1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1]),
        h.make_node("Add", ["c2", "a1"], ["r2"]),
        h.make_node("Relu", ["r2"], ["y2"]),
        h.make_node("Conv", ["y2", "W4"], ["c4"]),
        h.make_node("Relu", ["c4"], ["y"]),
        h.make_node("Conv", ["x", "W3", "B3"], ["z"]),
    ]
    shape = [batch, 32, 40, 40]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [batch, 16, 40, 40])],
                     [h.make_tensor_value_info("y", TP.FLOAT, shape),
                      h.make_tensor_value_info("z", TP.FLOAT, shape)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _before_tiling(monkeypatch, threads: bool, batch=1) -> str:
    """The module's text just before the tile step of the -O3 pipeline."""
    import onnx_mlir_py.passes.optimize as opt
    seen = []

    class Stop(Exception):
        pass

    def stop(m, th):
        seen.append(str(m))
        raise Stop
    monkeypatch.setattr(opt, "tile_packed_contractions", stop)
    module = import_model(_model(batch))
    to_onnx_ir(module)
    lower_to_linalg(module)
    with pytest.raises(Stop):
        opt.optimize(module, target_for("x86-64-v4"), threads=threads)
    monkeypatch.undo()
    return seen[0]


def _tiled(text: str, monkeypatch, isolate: bool, threads: bool):
    """The module after tile_packed_contractions, and the payload roots
    (op names) its interpreter runs got."""
    from mlir.dialects.transform import interpreter

    from onnx_mlir_py.passes.optimize import matmul, schedule
    roots = []
    real_apply = interpreter.apply_named_sequence

    class Recorder:
        @staticmethod
        def apply_named_sequence(root, *args):
            roots.append((root.name, str(root.attributes["sym_name"]) if root.name == "func.func"
                          else None))
            return real_apply(root, *args)
    monkeypatch.setattr(schedule, "interpreter", Recorder)
    if not isolate:
        monkeypatch.setattr(matmul, "_kernel_group", lambda op: None)
    ctx = make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
        n = matmul.tile_packed_contractions(module, threads)
    monkeypatch.undo()
    return str(module), roots, n



@pytest.mark.parametrize("batch", [1, "n"])
@pytest.mark.parametrize("threads", [False, True])
def test_isolated_runs_give_the_in_place_ir(monkeypatch, threads, batch):
    """(a dynamic batch: the per-image kernels in the batch loop)"""
    from onnx_mlir_py.passes.optimize import schedule_memo
    text = _before_tiling(monkeypatch, threads, batch)
    memo, _, n1 = _tiled(text, monkeypatch, True, threads)   # copies replayed (schedule_memo)
    monkeypatch.setenv(schedule_memo.ENV, "0")
    isolated, roots, n = _tiled(text, monkeypatch, True, threads)
    monkeypatch.delenv(schedule_memo.ENV, raising=False)     # (_tiled undid it)
    in_place, roots0, n0 = _tiled(text, monkeypatch, False, threads)
    assert n == n0 == n1 >= 3, (n, n0, n1)
    assert isolated == in_place == memo
    assert "__om_payload" not in isolated
    # every kernel ran on its own function, in place on the module (then
    # the cleanup, on the module, once)
    assert roots == [("func.func", '"__om_payload"')] * n + [("builtin.module", None)], roots
    assert roots0 == [("builtin.module", None)] * (n + 1), roots0


@pytest.mark.parametrize("batch", [1, "n"])
@pytest.mark.parametrize("threads", [1, 2])
def test_isolated_kernels_match_onnxruntime(threads, batch):
    """(a dynamic batch at 1 and 3 images)"""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    m = _model(batch)
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        sess = ExecutionSession(so, num_threads=threads)
        for n in ([1] if batch == 1 else [1, 3]):
            x = np.random.default_rng(5 + n).standard_normal((n, 16, 40, 40)).astype(np.float32)
            assert_match(sess.run([x]), reference(m, {"x": x}, "onnxruntime"),
                         rtol=1e-4, atol=1e-4)


def test_failed_schedule_puts_the_kernel_back(monkeypatch):
    """A schedule that fails (here: it does not parse) leaves the kernel's
    ops where they were, as an in-place run that fails does."""
    from onnx_mlir_py.passes.optimize import matmul
    text = _before_tiling(monkeypatch, True)
    out = []
    for isolate in (True, False):
        monkeypatch.setattr(matmul, "kernel_schedule", lambda op, threads=False: "    bogus\n")
        out.append(_tiled(text, monkeypatch, isolate, True))
    (isolated, roots, n), (in_place, _, n0) = out
    assert n == n0 == 0 and roots == []
    assert isolated == in_place and "__om_payload" not in isolated
    assert "onnx_mlir_py.sched" not in isolated
