"""TF tensor names in the ONNX model: the graph's inputs and outputs lose
their ``:0`` suffix (``input_1:0`` -> ``input_1``), so the library's
signature JSON, ``ExecutionSession.input_signature()`` and
``InferenceSession.get_inputs()`` show the names TensorFlow users know.
Other suffixes (``split:1``) stay: they name a second output."""
from __future__ import annotations

import onnx

from onnx_mlir_py.importer.model import all_graphs


def _all_names(model: onnx.ModelProto) -> set[str]:
    out = set()
    for g in all_graphs(model.graph):
        out.update(v.name for v in list(g.input) + list(g.output) + list(g.value_info))
        out.update(t.name for t in g.initializer)
        for n in g.node:
            out.update(n.input)
            out.update(n.output)
    return out


def rename_values(model: onnx.ModelProto, mapping: dict[str, str]) -> None:
    """Rename values everywhere (subgraphs read outer values by name), in place."""
    mapping = {k: v for k, v in mapping.items() if k != v}
    if not mapping:
        return
    for g in all_graphs(model.graph):
        for v in list(g.input) + list(g.output) + list(g.value_info):
            v.name = mapping.get(v.name, v.name)
        for t in g.initializer:
            t.name = mapping.get(t.name, t.name)
        for n in g.node:
            n.input[:] = [mapping.get(x, x) for x in n.input]
            n.output[:] = [mapping.get(x, x) for x in n.output]


def strip_port_zero(model: onnx.ModelProto) -> dict[str, str]:
    """Drop ``:0`` from graph input/output names when the short name is free;
    returns {old: new}."""
    taken = _all_names(model)
    mapping = {}
    for v in list(model.graph.input) + list(model.graph.output):
        if v.name.endswith(":0"):
            short = v.name[:-2]
            if short and short not in taken and short not in mapping.values():
                mapping[v.name] = short
    rename_values(model, mapping)
    return mapping
