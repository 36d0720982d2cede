"""Every node of a converted TensorFlow model that cannot be compiled, listed
at once with its TF node name, before any compiling (the TVM frontend's
``missing_operators`` sweep).

Three kinds, one ``UnsupportedOpsError``:

- TF ops tf2onnx cannot map: left in the graph under their TF op type (and
  TFLite's ``TFL_*``), found by the importer's own sweep for ops the ONNX
  dialect lacks (``importer/model.py::check_supported``);
- nodes whose tf2onnx handler failed (from its log, :class:`convert.FailedNodes`);
- ONNX ops with neither a lowering rule (``registry.has_lowering``) nor an
  ONNX function body (what ``expand-functions`` would expand), when the
  model is to be lowered. ``lower-to-linalg`` still checks the expanded
  module itself (``driver.check_supported``).

tf2onnx names an ONNX node after the TF node it comes from, so the names
shown are TF node names (nodes tf2onnx adds get a ``__N`` suffix).
"""
from __future__ import annotations

import onnx
from onnx import defs

from onnx_mlir_py.dialects.onnx.schema import spec_table
from onnx_mlir_py.errors import UnsupportedOpsError
from onnx_mlir_py.importer.model import check_supported, iter_nodes, opset_map
from onnx_mlir_py.importer.validate import node_label


def _not_in_dialect(model: onnx.ModelProto) -> list[tuple[str, str]]:
    try:
        check_supported(model)
    except UnsupportedOpsError as e:
        types = {node_label(n): n.op_type for n in iter_nodes(model.graph)}
        return [(f"{types.get(node, what)} (TensorFlow op: tf2onnx cannot convert it)", node)
                for what, node in e.nodes]
    return []


def _has_body(op_type: str, domain: str, opset: int) -> bool:
    try:
        s = defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        return False
    return bool((s.has_function and any(v <= opset for v in s.function_opset_versions)) or
                (s.has_context_dependent_function and
                 any(v <= opset for v in s.context_dependent_function_opset_versions)))


def _not_lowered(model: onnx.ModelProto, skip: set[str]) -> list[tuple[str, str]]:
    from onnx_mlir_py.registry import lookup
    table, opsets = spec_table(), opset_map(model)
    out = []
    for n in iter_nodes(model.graph):
        label = node_label(n)
        dom = "" if n.domain == "ai.onnx" else n.domain
        if label in skip or dom not in opsets:
            continue
        spec = table.resolve(dom, n.op_type, opsets[dom])
        if spec is None:
            continue
        rule = lookup("lower", dom, n.op_type, spec.since_version)
        graphs = any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                     for a in n.attribute)
        if rule is None and not _has_body(n.op_type, dom, opsets[dom]):
            out.append((f"{n.op_type} (ONNX op v{spec.since_version}: no lowering)", label))
        elif rule is not None and graphs and not getattr(rule, "handles_regions", False):
            out.append((f"{n.op_type} (ONNX op with subgraph: no lowering)", label))
    return out


def sweep(model: onnx.ModelProto, failed: dict[str, str], source: str,
          lowering: bool = True) -> None:
    """Raise one UnsupportedOpsError naming every node that stops the compile."""
    missing = _not_in_dialect(model)
    missing += [(f"conversion failed: {why}", name) for name, why in failed.items()
                if name not in {m[1] for m in missing}]
    if lowering:
        missing += _not_lowered(model, {m[1] for m in missing})
    if missing:
        raise UnsupportedOpsError(f"TensorFlow model '{source}'", missing)
