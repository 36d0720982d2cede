"""Delta debugging over a failing graph's nodes (Zeller's ddmin).

``reduce(model, runs, fails)`` shrinks ``model`` while ``fails(model, runs)``
stays true: first to one failing run and one graph output, then by removing
node *groups* (the generator's ``g<k>.<j>`` names; any other node is its own
group) in halves, quarters, ... down to single groups. A removed group's
values that the rest of the graph still reads become new graph inputs fed
with the values the reference computed for them, so the nodes that remain
see exactly the data they saw before. Dead nodes, inputs and initializers
are dropped after each step.
"""
from __future__ import annotations

import copy
import re

import numpy as np
import onnx
from onnx import helper

from onnx_mlir_py.testing.fuzz.inputs import Run
from onnx_mlir_py.testing.fuzz.oracle import reference_evaluator


def group_of(node: onnx.NodeProto) -> str:
    m = re.match(r"(g\d+)\.\d+$", node.name)
    return m.group(1) if m else f"node:{node.name or id(node)}"


def _reads(node: onnx.NodeProto) -> set[str]:
    names = {i for i in node.input if i}
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            for n in a.g.node:
                names |= _reads(n)
    return names


def prune(model: onnx.ModelProto) -> onnx.ModelProto:
    """Drop nodes no output depends on, and unused inputs/initializers."""
    g = model.graph
    live = {o.name for o in g.output}
    keep = []
    for n in reversed(g.node):
        if any(o in live for o in n.output):
            keep.append(n)
            live |= _reads(n)
    keep.reverse()
    del g.node[:]
    g.node.extend(keep)
    ins = [i for i in g.input if i.name in live]
    del g.input[:]
    g.input.extend(ins)
    inits = [t for t in g.initializer if t.name in live]
    del g.initializer[:]
    g.initializer.extend(inits)
    return model


def keep_outputs(model, runs, names) -> tuple[onnx.ModelProto, list[Run]]:
    m = copy.deepcopy(model)
    outs = [o for o in m.graph.output if o.name in names]
    del m.graph.output[:]
    m.graph.output.extend(outs)
    m = prune(m)
    kept = {i.name for i in m.graph.input}
    return m, [Run(r.binding, r.kind, {k: v for k, v in r.feeds.items() if k in kept})
               for r in runs]


def intermediates(model, runs, names: list[str]) -> list[dict]:
    """Per run, the values of ``names`` (onnx.reference, intermediate results)."""
    ev = reference_evaluator(model)
    out = []
    for r in runs:
        res = ev.run(None, r.feeds, intermediate=True)
        out.append({n: np.asarray(res[n]) for n in names})
    return out


def remove_groups(model, runs, groups: set[str]):
    """``model`` without the nodes of ``groups`` (see the module docstring);
    None when nothing would be left to compute."""
    g = model.graph
    gone = [n for n in g.node if group_of(n) in groups]
    rest = [n for n in g.node if group_of(n) not in groups]
    if not rest:
        return None
    produced = {o for n in gone for o in n.output}
    needed = sorted({i for n in rest for i in _reads(n)} & produced)
    outs = [o for o in g.output if o.name not in produced]
    # what the removed nodes read from the rest becomes an output (cutting
    # off a tail keeps the values that fed it observable)
    kept = {o for n in rest for o in n.output} - {o.name for o in outs}
    frontier = sorted({i for n in gone for i in _reads(n)} & kept)
    vals = intermediates(model, runs, needed + frontier)
    m = copy.deepcopy(model)
    del m.graph.node[:]
    m.graph.node.extend(rest)
    del m.graph.output[:]
    m.graph.output.extend(outs)
    for name in frontier:
        a = vals[0][name]
        m.graph.output.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(a.dtype), [None] * a.ndim))
    for k, name in enumerate(needed):
        arrs = [v[name] for v in vals]
        dims = [arrs[0].shape[a] if len({x.shape[a] for x in arrs}) == 1 else f"r{k}_{a}"
                for a in range(arrs[0].ndim)]
        m.graph.input.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(arrs[0].dtype), dims))
    new_runs = [Run(r.binding, r.kind, {**r.feeds, **{k: v[k] for k in needed}})
                for r, v in zip(runs, vals)]
    m = prune(m)
    kept = {i.name for i in m.graph.input}
    return m, [Run(r.binding, r.kind, {k: v for k, v in r.feeds.items() if k in kept})
               for r in new_runs]


def _try(fails, cand, log) -> bool:
    if cand is None:
        return False
    try:
        onnx.checker.check_model(cand[0], full_check=True)
    except Exception:  # noqa: BLE001 - an invalid candidate is just not taken
        return False
    ok = fails(*cand)
    log(f"  try {len(cand[0].graph.node)} nodes: {'still fails' if ok else 'passes'}")
    return ok


def _one_output(model, runs, fails, log):
    """(model, runs, tests): reduced to one failing graph output if possible."""
    names = [o.name for o in model.graph.output]
    for k, o in enumerate(names if len(names) > 1 else []):
        if _try(fails, keep_outputs(model, runs, {o}), log):
            return (*keep_outputs(model, runs, {o}), k + 1)
    return model, runs, len(names) if len(names) > 1 else 0


def reduce(model, runs, fails, log=lambda s: None, max_tests: int = 150):
    """The smallest (model, runs) found for which ``fails`` holds."""
    tests = 0
    for r in runs:                                   # one failing run is enough
        if len(runs) > 1 and fails(model, [r]):
            runs = [r]
            break
    while True:
        nodes = len(model.graph.node)
        model, runs, t = _one_output(model, runs, fails, log)   # one failing output too
        model, runs, t2 = _ddmin(model, runs, fails, log, max_tests - tests - t)
        tests += t + t2
        if len(model.graph.node) == nodes or tests >= max_tests:
            return model, runs


def _ddmin(model, runs, fails, log, max_tests):
    tests = 0
    n = 2
    while tests < max_tests:
        groups = list(dict.fromkeys(group_of(x) for x in model.graph.node))
        if len(groups) <= 1:
            break
        n = min(n, len(groups))
        size = -(-len(groups) // n)
        chunks = [groups[i:i + size] for i in range(0, len(groups), size)]
        for chunk in chunks:
            tests += 1
            try:
                cand = remove_groups(model, runs, set(chunk))
            except Exception:  # noqa: BLE001 - the reference cannot evaluate it
                cand = None
            if _try(fails, cand, log):
                model, runs = cand
                n = max(n - 1, 2)
                break
        else:
            if n >= len(groups):
                break
            n = min(len(groups), 2 * n)
    return model, runs, tests
