"""``verify --every-value``: expose every intermediate value, find the first
node whose output differs.

:func:`expose_values` makes a copy of the model whose outputs are its own
outputs, then the output of every node of the main graph (in topological
order), so both our compiled code and the reference compute and return
all of them. :func:`first_mismatch` walks the nodes in that order and
returns the first one with an output outside the tolerance: the node
where the error starts (the values it reads all match, unless they are
graph inputs or values that were not compared).

Values inside If/Loop/Scan bodies are not exposed (the node that owns the
body is); nor are values onnx infers to be sequences, maps or optionals.
Exposing a value can keep a -O2/-O3 graph rewrite from fusing the node
that makes it; a mismatch of the plain run that disappears here lies in
such a rewrite (verify at -O1 to confirm).
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from onnx_mlir_py.importer.validate import node_label
from onnx_mlir_py.verify.compare import Diff, type_str


def _non_tensor_values(model: onnx.ModelProto) -> set[str]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        return set()
    return {vi.name for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
            if vi.type.WhichOneof("value") not in (None, "tensor_type")}


def expose_values(model: onnx.ModelProto) -> tuple[onnx.ModelProto, list[str]]:
    """(a copy with every node output of the main graph as a graph output,
    the names of all its outputs in order)."""
    skip = _non_tensor_values(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    names = [o.name for o in out.graph.output]
    seen = set(names)
    for node in out.graph.node:
        for v in node.output:
            if v and v not in seen and v not in skip:
                out.graph.output.append(onnx.ValueInfoProto(name=v))  # type: inferred
                names.append(v)
                seen.add(v)
    return out, names


@dataclass
class Mismatch:
    index: int                  # position of the node in topological order
    node: onnx.NodeProto
    lines: list[str]            # the report: the node, its outputs, its inputs


def first_mismatch(model: onnx.ModelProto, inputs: dict, ours: dict, diffs: dict[str, Diff]
                   ) -> Mismatch | None:
    """The first node (``model.graph.node`` is in topological order) with an
    output that differs, and its report; None if every compared value matches."""
    producer = {v: (k, n) for k, n in enumerate(model.graph.node) for v in n.output if v}
    inits = {t.name for t in model.graph.initializer}
    graph_inputs = {vi.name for vi in model.graph.input} - inits
    for k, node in enumerate(model.graph.node):
        outs = [v for v in node.output if v in diffs]
        if all(diffs[v].ok for v in outs):
            continue
        lines = [f"first mismatch: node #{k} '{node_label(node)}' ({node.op_type})"]
        for v in outs:
            lines.append(f"  output '{v}': {type_str(ours[v])} "
                         f"{'ok' if diffs[v].ok else 'DIFFERS'}: {diffs[v].describe()}")
        for i, v in enumerate(node.input):
            what = f"  input #{i} '{v}': "
            if not v:
                continue
            if v in inits:
                lines.append(what + "an initializer")
            elif v in graph_inputs:
                lines.append(what + f"{type_str(inputs[v])}, a graph input")
            elif v in diffs:
                pk, pn = producer[v]
                d = diffs[v]
                lines.append(what + f"{type_str(ours[v])} from node #{pk} "
                             f"'{node_label(pn)}' ({pn.op_type}) "
                             f"{'matches' if d.ok else 'DIFFERS'}: {d.describe()}")
            else:
                lines.append(what + "not compared (not a tensor of the main graph)")
        return Mismatch(k, node, lines)
    return None
