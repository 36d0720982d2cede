"""Random valid ONNX graphs (after NNSmith's idea: grow a graph one op at a
time from specs that know their legal shapes; here with concrete sizes per
binding instead of an SMT solver).

``generate(seed, index)`` is deterministic: case ``index`` of run ``seed``
always yields the same model. Each op spec is tried where it fits; a spec
that cannot apply is rolled back and another is drawn. Every model is checked
with ``onnx.checker`` (full check: strict shape inference) before use.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import onnx

from onnx_mlir_py.testing.fuzz.graph import Builder, Reject
from onnx_mlir_py.testing.fuzz.ops import load_all

OPSETS = (13, 17, 18, 21)


@dataclass
class Case:
    seed: int
    index: int
    model: onnx.ModelProto
    bindings: int                      # 2, or 3 with the "empty" binding
    index_ranges: dict = field(default_factory=dict)   # input -> per-binding (lo, hi)
    input_dims: dict = field(default_factory=dict)     # input -> per-binding shapes

    @property
    def name(self) -> str:
        return f"s{self.seed}-{self.index}"

    def ops(self) -> list[str]:
        return sorted({n.op_type for n in self.model.graph.node})


def _used_names(nodes) -> set[str]:
    used = set()
    for n in nodes:
        used.update(i for i in n.input if i)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                used |= _used_names(a.g.node)
                used.update(o.name for o in a.g.output)
    return used


def generate(seed: int, index: int, max_nodes: int = 12, opset: int | None = None,
             ops: list[str] | None = None) -> Case:
    """Case ``index`` of run ``seed``: a graph of 2..``max_nodes`` nodes.
    ``ops`` limits the specs used (names of ``ops.SPECS``)."""
    rng = random.Random(f"fuzz:{seed}:{index}")
    nrng = np.random.default_rng([seed, index])
    opset = opset or rng.choice(OPSETS)
    g = Builder(rng, nrng, opset, dynamic=rng.random() < 0.5, empty=rng.random() < 0.3)
    specs = [s for s in load_all().values() if opset >= s.min_opset and
             (s.name in ops if ops is not None else not s.mode)]
    weights = [s.weight for s in specs]
    target = rng.randint(2, max(2, max_nodes))
    attempts = 0
    while len(g.nodes) < target and attempts < 30 * target:
        attempts += 1
        sp = rng.choices(specs, weights)[0]
        snap = (len(g.nodes), len(g.inputs), len(g.inits), len(g.values),
                dict(g.index_ranges), g.empty_ok)
        g.begin_group()
        try:
            sp.fn(g)
        except Reject:
            del g.nodes[snap[0]:], g.inputs[snap[1]:], g.inits[snap[2]:], g.values[snap[3]:]
            g.index_ranges, g.empty_ok = snap[4], snap[5]
            continue
        if len(g.nodes) > max_nodes:        # a multi-node group overshot the budget
            del g.nodes[snap[0]:], g.inputs[snap[1]:], g.inits[snap[2]:], g.values[snap[3]:]
            g.index_ranges, g.empty_ok = snap[4], snap[5]
            break
    if not g.nodes:
        raise RuntimeError(f"no node generated for seed {seed} index {index}")
    used = _used_names(g.nodes)
    node_outs = {o for n in g.nodes for o in n.output}
    produced = [v for v in g.values if v.name in node_outs]
    outputs = [v for v in produced if v.name not in used]
    extra = [v for v in produced if v.name in used and rng.random() < 0.1]
    model = g.model(outputs + extra)
    ins = {v.name: [v.shape(b) for b in range(g.nb)] for v in g.inputs}
    return Case(seed, index, model, g.nb if g.empty_ok else 2, g.index_ranges, ins)


def check(model: onnx.ModelProto) -> onnx.ModelProto:
    """``onnx.checker`` with strict shape inference; returns the inferred model."""
    onnx.checker.check_model(model, full_check=True)
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                             data_prop=True)
