"""Per-kernel budgets (passes/optimize/kernel_budget.py, issue #29): an -O3
kernel that grows past its budget of SSA values sends its node (and the
nodes of the same kernel, op and shapes) to the generic path, with one
warning line per node; the library still matches onnxruntime.

What can go wrong, and what each test checks:
- the fallback names the wrong node, or leaves the module half rewritten
  (the stage is re-run from its input): the warned nodes are exactly those
  whose kernels passed the budget (measured in the same test), their plan
  entries are ``linalg`` with the reason, every other node keeps its
  kernel, and the outputs match onnxruntime;
- nodes of one kernel fall back one round each (a round re-runs the stage):
  two convs of the same shapes go in one round;
- no end: past MAX_ROUNDS, the compile stops with one line;
- a budget of 0 is none; a bad value is one line, not a traceback;
- the CLI prints each warning as one ``warning: node '...'`` line.
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.errors import CompileError, KernelBudgetWarning
from onnx_mlir_py.isa import is_x86_host
from onnx_mlir_py.options import Options
from onnx_mlir_py.passes.optimize import kernel_budget, kernel_emit
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match, reference

pytestmark = pytest.mark.skipif(not is_x86_host(), reason="the x86-64 -O3 kernels")


def _model() -> onnx.ModelProto:
    """A 3-channel stem conv (direct kernel), two 3x3 convs of the same shapes,
    a depthwise conv, a max pool."""
    r = np.random.default_rng(0)
    init = [nh.from_array((r.standard_normal(s) * 0.2).astype(np.float32), n) for n, s in
            [("w_stem", (16, 3, 7, 7)), ("w_a", (16, 16, 3, 3)), ("w_b", (16, 16, 3, 3)),
             ("w_dw", (16, 1, 3, 3))]]
    nodes = [h.make_node("Conv", ["x", "w_stem"], ["a"], name="stem", pads=[3, 3, 3, 3]),
             h.make_node("Relu", ["a"], ["b"], name="relu"),
             h.make_node("Conv", ["b", "w_a"], ["c"], name="conv_a", pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["c", "w_b"], ["d"], name="conv_b", pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["d", "w_dw"], ["e"], name="depthwise", pads=[1, 1, 1, 1],
                         group=16),
             h.make_node("MaxPool", ["e"], ["y"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2])]
    g = h.make_graph(nodes, "budget", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 24, 24])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 16, 12, 12])], init)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.fixture(autouse=True)
def _no_stage_cache(monkeypatch):
    monkeypatch.setenv("ONNX_MLIR_PY_STAGE_CACHE", "0")


def _compile(tmp_path, monkeypatch, budget=None, sizes=None):
    """(plan entries by node, budget warnings, the library's path); ``sizes``
    receives each node's largest emitted kernel (SSA values)."""
    if budget is not None:
        monkeypatch.setenv(kernel_budget.ENV, str(budget))
    if sizes is not None:
        real = kernel_emit.Emitter.function

        def function(self, *a, **k):
            node = kernel_budget.current()
            if node:
                sizes[node] = max(sizes.get(node, 0), self.k)
            return real(self, *a, **k)
        monkeypatch.setattr(kernel_emit.Emitter, "function", function)
    plans = []
    out = tmp_path / f"m{budget}.so"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run_pipeline(_model(), Options(opt_level=3), str(out), on_plan=plans.append)
    assert len(plans) == 1, plans       # the plan of the round that built the kernels
    warned = [str(x.message) for x in w if issubclass(x.category, KernelBudgetWarning)]
    return {e.node: e for e in plans[0].entries}, warned, str(out)


def _check(so):
    x = np.random.default_rng(1).standard_normal((1, 3, 24, 24)).astype(np.float32)
    got = ExecutionSession(so).run([x])
    assert_match(got, reference(_model(), {"x": x}, "onnxruntime"), rtol=1e-4, atol=1e-4)


def _warned_nodes(warned):
    return sorted(m.split("'")[1] for m in warned)


def test_the_largest_kernels_node_falls_back(tmp_path, monkeypatch):
    sizes: dict[str, int] = {}
    base, warned, _ = _compile(tmp_path, monkeypatch, sizes=sizes)
    assert not warned
    assert base["stem"].kernel == "conv_direct" and base["depthwise"].kernel == "depthwise_rows"
    big = max(sizes.values())
    over = sorted(n for n, k in sizes.items() if k >= big)
    plan, warned, so = _compile(tmp_path, monkeypatch, budget=big)
    assert _warned_nodes(warned) == over, (warned, sizes)
    for m in warned:
        assert m.startswith("node '") and "\n" not in m and f"grew past {big} values" in m, m
    for node, e in plan.items():
        if node in over:
            assert e.kernel == "linalg" and e.reason.startswith(kernel_budget.REASON), e
        else:
            assert e.kernel == base[node].kernel, (node, e, base[node])
    _check(so)


def test_nodes_of_one_kernel_fall_back_in_one_round(tmp_path, monkeypatch):
    sizes: dict[str, int] = {}
    base, _, _ = _compile(tmp_path, monkeypatch, sizes=sizes)
    assert (base["conv_a"].kernel, base["conv_a"].shape) == (base["conv_b"].kernel,
                                                            base["conv_b"].shape)
    # conv_b's kernel is conv_a's (built once): only conv_a builds it
    k = sizes["conv_a"]
    rounds = []
    from onnx_mlir_py import passes
    real = passes.optimize._optimize

    def counted(*a, **kw):
        rounds.append(1)
        return real(*a, **kw)
    monkeypatch.setattr(passes.optimize, "_optimize", counted)
    plan, warned, so = _compile(tmp_path, monkeypatch, budget=k)
    assert {"conv_a", "conv_b"} <= set(_warned_nodes(warned)), warned
    assert plan["conv_a"].kernel == plan["conv_b"].kernel == "linalg"
    over = {n for n, s in sizes.items() if s >= k}
    assert len(rounds) == 1 + len({(base[n].op, base[n].shape, base[n].kernel) for n in over})
    _check(so)


def test_past_max_rounds_the_compile_stops_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_budget, "MAX_ROUNDS", 2)     # one fallback, then stop
    sizes: dict[str, int] = {}
    _compile(tmp_path, monkeypatch, sizes=sizes)
    second = sorted(set(sizes.values()))[-2]        # two distinct kernels pass it
    over = {n for n, k in sizes.items() if k >= second}
    assert len(over) == 2, sizes
    with pytest.raises(CompileError) as e:
        _compile(tmp_path, monkeypatch, budget=second)
    msg = str(e.value)
    assert "\n" not in msg and kernel_budget.ENV in msg, msg
    assert any(msg.startswith(f"node '{n}'") for n in over), (msg, over)
    assert "(1 node already on the generic path, 2 rounds" in msg, msg


def test_budget_zero_is_none_and_a_bad_value_is_one_line(tmp_path, monkeypatch):
    base, _, _ = _compile(tmp_path, monkeypatch)
    plan, warned, so = _compile(tmp_path, monkeypatch, budget=0)
    assert not warned and {n: e.kernel for n, e in plan.items()} == \
        {n: e.kernel for n, e in base.items()}
    monkeypatch.setenv(kernel_budget.ENV, "lots")
    with pytest.raises(CompileError, match=f"{kernel_budget.ENV}='lots': expected a number"):
        run_pipeline(_model(), Options(opt_level=3), str(tmp_path / "bad.so"))


def test_cli_prints_one_warning_line_per_node(tmp_path, monkeypatch):
    sizes: dict[str, int] = {}
    _compile(tmp_path, monkeypatch, sizes=sizes)
    big = max(sizes.values())
    path = tmp_path / "m.onnx"
    onnx.save(_model(), str(path))
    env = dict(os.environ, **{kernel_budget.ENV: str(big)})
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path), "-O3"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    over = sorted(n for n, k in sizes.items() if k >= big)
    assert len(lines) == len(over) and all(
        ln.startswith(f"warning: node '{n}'") for ln, n in zip(sorted(lines), over)), r.stderr
    assert "Traceback" not in r.stderr
