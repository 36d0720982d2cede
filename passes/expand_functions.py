"""expand-functions: ops with no lowering rule become their ONNX function bodies.

Many ONNX ops are defined by a function of simpler ops (SoftmaxCrossEntropyLoss,
Celu, MeanVarianceNormalization, Range, the window functions, ...). An op
whose version has no ``@lowering`` rule (``registry.has_lowering``), or whose
rule does not take this form of it (the rule's ``unsupported(op)`` gives a
reason, e.g. Attention with past key/value), but has such a body is replaced by the body's ops, imported at the model's opsets
(``importer/functions.py::node_body`` builds the body, ``GraphImporter``
imports it in place). Bodies may use ops that need expanding in turn, so
this repeats up to ``MAX_ROUNDS`` times. Ops with a lowering, and ops with
no body, are left as they are (``lower-to-linalg`` reports the latter).

The compiler runs this pass right after import when the model is going to
be lowered, so the ONNX-IR pipeline (verify, shape-inference) sees the
expanded ops; ``--EmitONNXBasic`` / ``--EmitONNXIR`` keep the ops themselves.
"""
from __future__ import annotations

import base64

import mlir.ir as ir
import onnx
from onnx import helper

from onnx_mlir_py.dialects.onnx.attributes import GRAPH_PROTOS_ATTR
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.dialects.onnx.types import MLIR_TO_ELEM_TYPE
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.importer.functions import node_body
from onnx_mlir_py.importer.nodes import GraphImporter
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.fold_constants import attr_proto
from onnx_mlir_py.passes.shape_inference import update_function_types
from onnx_mlir_py.registry import lookup

MAX_ROUNDS = 4


def module_opsets(module: ir.Module) -> dict[str, int]:
    """The model's opsets (domain -> version, "" for ai.onnx), as the importer recorded them."""
    attrs = module.operation.attributes
    if "onnx.opset_import" not in attrs:     # the bodies are built at the model's opsets
        raise CompileError("expand-functions: the module has no 'onnx.opset_import' "
                           "attribute (the importer sets it)")
    return {("" if d.name == "ai.onnx" else d.name): int(ir.IntegerAttr(d.attr).value)
            for d in attrs["onnx.opset_import"]}


def expand_functions(module: ir.Module) -> None:
    opsets = module_opsets(module)
    for _ in range(MAX_ROUNDS):
        todo = [op for op in walk_ops(module, is_onnx_op) if unlowered(op)]
        expanded = [op for op in todo if _expand(op, opsets)]
        if not expanded:
            break
    update_function_types(module)        # results may now be typed otherwise


def unlowered(op: ir.Operation) -> bool:
    """An ONNX op this pass expands if it has a body: no lowering rule for its version."""
    if op.name == "onnx.constant":
        return False
    v = OnnxOp(op)
    rule = lookup("lower", v.spec.domain, v.op_type, v.version)
    # a rule may take only some forms of its op (``rule.unsupported(op)``: why not)
    return rule is None or getattr(rule, "unsupported", lambda _v: None)(v) is not None


def _type_proto(t: ir.Type) -> onnx.TypeProto | None:
    from onnx_mlir_py.dialects.onnx.ops.control_flow import opt_elem, seq_elem
    for inner, make in ((seq_elem(t), helper.make_sequence_type_proto),
                        (opt_elem(t), helper.make_optional_type_proto)):
        if inner is not None:      # SequenceMap's body depends on these types
            tp = _type_proto(inner)
            return make(tp) if tp is not None else None
    if not isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)):
        return None
    elem = MLIR_TO_ELEM_TYPE.get(str(t.element_type))
    if elem is None:
        return None
    shape = None if isinstance(t, ir.UnrankedTensorType) else [
        None if t.is_dynamic_dim(i) else d for i, d in enumerate(t.shape)]
    return helper.make_tensor_type_proto(elem, shape)


def _as_node(v: OnnxOp) -> tuple[onnx.NodeProto, dict, dict] | None:
    """The op as an ONNX node with inputs ``i<k>`` / outputs ``o<k>``, the known
    input types and {input name: operand}; None if it cannot be written so."""
    graphs = {}
    if any(len(r.blocks) for r in v.op.regions):   # graph attributes that are set
        if GRAPH_PROTOS_ATTR not in v.op.attributes:
            return None
        for entry in ir.DictAttr(v.op.attributes[GRAPH_PROTOS_ATTR]):
            g = onnx.GraphProto()
            g.ParseFromString(base64.b64decode(ir.StringAttr(entry.attr).value))
            graphs[entry.name] = g
    names, types, values = [], {}, {}
    for group in v.operand_groups():
        if not group:
            names.append("")
        for x in group:
            n = f"i{len(values)}"
            names.append(n)
            values[n] = x
            tp = _type_proto(x.type)
            if tp is not None:
                types[n] = tp
    while names and names[-1] == "":   # absent trailing inputs: not written (a function
        names.pop()                    # body binds only the inputs it declares)
    outs = []
    for group in v.result_groups():
        if not group:
            outs.append("")
        outs.extend(f"o{ir.OpResult(r).result_number}" for r in group)
    node = helper.make_node(v.op_type, names, outs, name=v.name, domain=v.spec.domain)
    for name, g in graphs.items():
        node.attribute.append(helper.make_attribute(name, g))
    for name, aspec in v.spec.attributes.items():
        if name in v.op.attributes and name not in graphs:
            try:
                p = attr_proto(name, aspec.kind, v.op.attributes[name])
            except (TypeError, ValueError):
                p = None
            if p is None:
                return None
            node.attribute.append(p)
    return node, types, values


def function_body(op: ir.Operation, opsets: dict[str, int]
                  ) -> tuple[onnx.GraphProto, dict] | None:
    """``op``'s ONNX function body at ``opsets`` (a graph reading ``i<k>`` and
    making ``o<k>``) and {input name: operand}; None if it has none (for these
    types) or the op cannot be written as a node."""
    written = _as_node(OnnxOp(op))
    if written is None:
        return None
    node, types, values = written
    body = node_body(node, opsets, types)
    if body is None:
        return None
    produced = {o for n in body.node for o in n.output}
    if any(o.name not in produced for o in body.output):
        return None
    return body, values


def _expand(op: ir.Operation, opsets: dict[str, int]) -> bool:
    v = OnnxOp(op)
    found = function_body(op, opsets)
    if found is None:
        return False
    body, values = found
    for n in body.node:                  # the body's ops are named after the node
        n.name = f"{v.name}/{n.name or n.op_type}"
    gi = GraphImporter(opsets, {vi.name: vi.type for vi in list(body.value_info)
                                + list(body.output) if vi.HasField("type")})
    gi.values.update(values)
    with ir.InsertionPoint(op):
        gi.import_graph_body(body)
    for r in op.results:
        r.replace_all_uses_with(gi.values[f"o{r.result_number}"])
    op.erase()
    return True
