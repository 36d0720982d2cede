"""The -O3 pipeline skips the steps that have nothing to do
(passes/optimize/__init__.py: ``census``, issue #29): an elementwise model
runs none of the kernel steps, and the skipping changes no IR: the module
after ``optimize`` is the same as with every step run (the census
monkeypatched to "everything is there"), for an elementwise chain, a model
with a reduction (Softmax, static and over a run-time row), a MatMul and a
Conv + ReLU. No schedule tag is left on any op (the elementwise step drops
its tags without a walk when every schedule vectorized its op:
schedule.apply_to_ops(consumes=))."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize.kernel_plan import KERNELS, PlanEntry
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.timings import Timings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import compile_time  # noqa: E402  (the compile-time benchmark's chain model)


def _model(kind: str):
    if kind == "chain":
        return compile_time.chain_model(12)
    rng = np.random.default_rng(0)
    if kind.startswith("softmax"):     # softmax_dyn: a run-time row (peeled loops)
        nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=-1),
                 helper.make_node("Relu", ["s"], ["y"])]
        inits, xs = [], [8, "L" if kind == "softmax_dyn" else 64]
        ys = xs
    elif kind == "matmul":
        w = numpy_helper.from_array(rng.standard_normal((64, 32)).astype(np.float32), "w")
        nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
                 helper.make_node("Tanh", ["m"], ["y"])]
        inits, xs, ys = [w], [16, 64], [16, 32]
    else:   # conv
        w = numpy_helper.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "w")
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["y"])]
        inits, xs, ys = [w], [1, 4, 16, 16], [1, 8, 16, 16]
    g = helper.make_graph(nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ys)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _optimized(kind: str, everything: bool, monkeypatch) -> tuple[str, dict]:
    import onnx_mlir_py.passes.optimize as O
    from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
    from onnx_mlir_py.target import target_for
    real = O.census

    def all_kinds(module):
        c = real(module)
        return O.Census(c.names | set(O.FAMILIES) | {"tensor.dim", "linalg.pack", "vector.x"}
                        | set(O.FOLDABLE), True)
    monkeypatch.setattr(O, "census", all_kinds if everything else real)
    if everything:      # a plan with an entry of every kernel: the kernel steps run (on no ops)
        plan = O.plan_kernels
        every = [PlanEntry("?", "?", "?", k, "-", False, "") for fam in KERNELS.values()
                 for k, _ in fam]
        monkeypatch.setattr(O, "plan_kernels", lambda *a: (
            lambda p: O.KernelPlan(p.target, p.threads, p.entries + every))(plan(*a)))
    module = import_model(_model(kind))
    to_onnx_ir(module)
    lower_to_linalg(module)
    tm = Timings()
    O.optimize(module, target_for("x86-64-v4"), threads=True, timings=tm)
    text = str(module)
    assert "om.kernel" not in text and "onnx_mlir_py.sched" not in text   # no tag left
    return text, tm.steps.get("optimize (tensor -O3)", {})


@pytest.mark.parametrize("kind", ["chain", "softmax", "softmax_dyn", "matmul", "conv"])
def test_skipping_changes_no_ir(kind, monkeypatch):
    skipped, steps = _optimized(kind, False, monkeypatch)
    full, all_steps = _optimized(kind, True, monkeypatch)
    assert skipped == full
    assert "attention" in all_steps and "pack matmuls" in all_steps
    if kind in ("matmul", "conv"):   # a kernel: every step runs but the other kernels'
        assert set(all_steps) - set(steps) <= KERNEL_STEPS, set(all_steps) - set(steps)
        assert {"pack matmuls", "tile packed contractions", "clear plan"} <= set(steps)
        if kind == "conv":
            assert {"direct convs", "convs to matmul"} & set(steps)


# the steps of one kernel family each (run only when the plan gave that kernel an op)
KERNEL_STEPS = {"attention", "depthwise int8", "depthwise", "pools", "dynamic pools",
                "direct convs", "convs to matmul", "dynamic convs", "int8 convs",
                "int8 matmuls", "int8 amx matmuls", "bf16 matmuls", "bf16 convs",
                "nbits decode"}


def test_kernel_steps_without_planned_ops_are_skipped(monkeypatch):
    """A model with one conv runs its kernel's step, not the other kernels'
    (each walked the module for nothing, #29), with the same IR."""
    _, steps = _optimized("conv", False, monkeypatch)
    ran = KERNEL_STEPS & set(steps)
    assert len(ran) == 1 and ran <= {"direct convs", "convs to matmul"}, ran


def test_elementwise_model_skips_the_kernel_steps(monkeypatch):
    _, steps = _optimized("chain", False, monkeypatch)
    for name in ("attention", "depthwise", "pools", "convs to matmul", "int8 matmuls",
                 "clear plan", "pack matmuls", "tile packed contractions", "lower packs",
                 "reassociate reductions"):
        assert name not in steps, name
    for name in ("canonicalize", "fuse elementwise", "approximate math",
                 "vectorize elementwise", "cleanup vectors"):
        assert name in steps, name


def test_census():
    import onnx_mlir_py.passes.optimize as O
    from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
    for kind, contractions in (("chain", False), ("softmax", True), ("matmul", True)):
        module = import_model(_model(kind))
        to_onnx_ir(module)
        lower_to_linalg(module)
        c = O.census(module)
        assert c.contractions == contractions, kind
        assert "linalg.generic" in c.names and "func.func" in c.names
