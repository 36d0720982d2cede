"""Emit the ONNX dialect for a graph: one op per node, in graph order.

``GraphImporter`` owns the name -> SSA value map of one graph; subgraphs
(If/Loop/Scan bodies) get a child importer whose lookups fall back to the
parent, so captured outer values are used directly inside the region.
Region bodies end with ``gpu.yield``: IRDL ops cannot be terminators, and
``gpu.yield`` is the upstream terminator with no parent constraint that
accepts any type (see docs/dialect.md).
"""
from __future__ import annotations

import base64

import mlir.ir as ir
import onnx

from onnx_mlir_py.dialects.onnx.schema import (SINGLE, VARIADIC, VARIADIC_SLOTS, OpSpec,
                                               needs_segments, segment_sizes, spec_table)
from onnx_mlir_py.errors import ImportError_, node_error
from onnx_mlir_py.dialects.onnx import attributes as A
from onnx_mlir_py.dialects.onnx.attributes import DECLARED_ATTR, GRAPH_PROTOS_ATTR
from onnx_mlir_py.importer.model import node_label
from onnx_mlir_py.dialects.onnx.types import UNKNOWN, meet, type_from_proto

REGION_TERMINATOR = "gpu.yield"
# Discardable attribute holding the model's declared result types where they
# add to (or contradict) onnx.shape_inference's; read and dropped by the
# shape-inference pass (passes/shape_inference.py).


class GraphImporter:
    def __init__(self, opsets: dict[str, int], value_types: dict[str, onnx.TypeProto],
                 parent: "GraphImporter | None" = None,
                 declared: dict[str, onnx.TypeProto] | None = None,
                 weights: dict[str, bytes] | None = None):
        self.opsets = opsets
        # the main graph's initializers parsed without their raw_data (model.load_model)
        self.weights = weights or {}
        self.value_types = value_types
        self.declared = declared if declared is not None else \
            (parent.declared if parent is not None else {})
        self.parent = parent
        self.values: dict[str, ir.Value] = {}
        self.table = spec_table()

    # -- values -------------------------------------------------------------
    def lookup(self, name: str) -> ir.Value | None:
        g = self
        while g is not None:
            if name in g.values:
                return g.values[name]
            g = g.parent
        return None

    def type_of(self, name: str) -> ir.Type:
        tp = self.value_types.get(name)
        return type_from_proto(tp) if tp is not None else ir.Type.parse(UNKNOWN)

    # -- graph body ---------------------------------------------------------
    def import_initializers(self, graph: onnx.GraphProto) -> None:
        for t in graph.initializer:
            loc = ir.Location.name(t.name)
            raw = self.weights.get(t.name) if not t.HasField("raw_data") else None
            try:
                attr = A.tensor_attr(t, t.name, raw)
            except ValueError as e:
                raise ImportError_(f"initializer '{t.name}': {e}") from None
            op = ir.Operation.create("onnx.constant", results=[attr.type],
                                     attributes={"value": attr}, loc=loc)
            self.values[t.name] = op.result
        for t in graph.sparse_initializer:
            raise ImportError_(f"sparse initializer '{t.values.name}' is not supported")

    def import_nodes(self, graph: onnx.GraphProto) -> None:
        for node in graph.node:
            self.import_node(node)

    def import_node(self, node: onnx.NodeProto) -> None:
        label = node_label(node)
        dom = "" if node.domain == "ai.onnx" else node.domain
        spec = self.table.resolve(dom, node.op_type, self.opsets.get(dom, 0))
        if spec is None:  # check_supported ran first; keep a clear message anyway
            raise node_error(ImportError_, label, node.op_type, "op is not in the ONNX dialect")
        operands, seg_in = self._operands(node, spec, label)
        try:  # a type the model states or onnx infers may be no ONNX type (elem_type 999)
            result_types, seg_out, out_names = self._results(node, spec, label)
            attrs = self._attributes(node, spec, label)
            declared = self._declarations(out_names, result_types)
        except ValueError as e:
            raise node_error(ImportError_, label, node.op_type, f"output type: {e}") from None
        if declared:
            attrs[DECLARED_ATTR] = declared
        if seg_in is not None:
            attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(seg_in)
        if seg_out is not None:
            attrs["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(seg_out)
        graphs = {a.name: a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH}
        if graphs and spec.has_function:
            # the expand-functions pass builds the op's body from the node, and
            # a region cannot be written back as a GraphProto: keep the graphs
            attrs[GRAPH_PROTOS_ATTR] = ir.DictAttr.get({
                name: ir.StringAttr.get(base64.b64encode(g.SerializeToString()).decode())
                for name, g in graphs.items()})
        op = ir.Operation.create(spec.mlir_name, results=result_types, operands=operands,
                                 attributes=attrs, regions=len(spec.regions),
                                 loc=ir.Location.name(label))
        for i, rname in enumerate(spec.regions):
            if rname in graphs:
                self._import_region(op.regions[i], graphs[rname])
            elif spec.attributes[rname].required:
                raise node_error(ImportError_, label, node.op_type,
                                 f"missing graph attribute '{rname}'")
            # an absent optional graph stays an empty region
        for name, res in zip(out_names, op.results):
            if name:
                self.values[name] = res

    # -- pieces of a node ---------------------------------------------------
    def _operands(self, node, spec: OpSpec, label):
        names = list(node.input)
        operands, seg = [], []
        pos = 0
        for i, v in enumerate(spec.inputs):
            if v.option == VARIADIC:
                group = names[pos:]
                pos = len(names)
            else:
                group = names[pos:pos + 1]
                pos += 1
            present = [n for n in group if n]
            if v.option == SINGLE and not present:
                raise node_error(ImportError_, label, node.op_type,
                                 f"missing required input #{i} '{v.onnx_name}'")
            if v.option == VARIADIC and len(present) != len(group):
                raise node_error(ImportError_, label, node.op_type,
                                 f"variadic input '{v.onnx_name}' has an empty name")
            for n in present:
                val = self.lookup(n)
                if val is None:
                    raise node_error(ImportError_, label, node.op_type,
                                     f"input '{n}' is not defined before this node")
                operands.append(val)
            seg.append(len(present))
        if pos < len(names) and any(names[pos:]):
            raise node_error(ImportError_, label, node.op_type,
                             f"has {len(names)} inputs, the op takes at most {len(spec.inputs)}")
        return operands, self._segments(spec.inputs, seg, node, label, "inputs")

    def _results(self, node, spec: OpSpec, label):
        names = list(node.output)
        types, seg, kept = [], [], []
        pos = 0
        for i, v in enumerate(spec.outputs):
            group = names[pos:] if v.option == VARIADIC else names[pos:pos + 1]
            pos += len(group) if v.option == VARIADIC else 1
            present = [n for n in group if n] if v.option != SINGLE else group
            if v.option == SINGLE and not group:
                raise node_error(ImportError_, label, node.op_type,
                                 f"missing required output #{i} '{v.onnx_name}'")
            for n in present:
                types.append(self._result_type(n, spec.allowed_types(v)))
                kept.append(n)
            seg.append(len(present))
        if pos < len(names) and any(names[pos:]):
            raise node_error(ImportError_, label, node.op_type,
                             f"has {len(names)} outputs, the op has at most {len(spec.outputs)}")
        return types, self._segments(spec.outputs, seg, node, label, "outputs"), kept

    def _result_type(self, name: str, allowed: list[str]) -> ir.Type:
        """The type onnx.shape_inference gives; an unknown sequence/optional
        value still gets its container type (from the schema, or else from
        the declared type), which IRDL checks."""
        t = self.type_of(name)
        if str(t) != UNKNOWN:
            return t
        kinds = (("seq(", "!onnx.seq"), ("optional(", "!onnx.opt"))
        for kind, mlir in kinds:
            if allowed and all(a.startswith(kind) for a in allowed):
                return ir.Type.parse(f"{mlir}<{UNKNOWN}>")
        declared = str(type_from_proto(self.declared[name])) if name in self.declared else ""
        for _, mlir in kinds:
            if declared.startswith(mlir + "<"):
                return ir.Type.parse(f"{mlir}<{UNKNOWN}>")
        return t

    def _declarations(self, names: list[str], types: list[ir.Type]) -> ir.DictAttr | None:
        """Declared types that say more than (or contradict) the inferred
        ones, as ``{"<result index>:<value name>" = type}``; the
        shape-inference pass checks them against its own inference."""
        out = {}
        for i, (name, t) in enumerate(zip(names, types)):
            tp = self.declared.get(name)
            if tp is None:
                continue
            d = type_from_proto(tp)
            if str(d) == UNKNOWN or str(meet(t, d)) == str(t):
                continue
            out[f"{i}:{name}"] = ir.TypeAttr.get(d)
        return ir.DictAttr.get(out) if out else None

    @staticmethod
    def _segments(values, counts, node, label, what):
        if not needs_segments(values):
            return None
        for v, n in zip(values, counts):
            if v.option == VARIADIC and n > VARIADIC_SLOTS:
                raise node_error(ImportError_, label, node.op_type,
                                 f"{n} {what} in '{v.onnx_name}'; at most {VARIADIC_SLOTS} "
                                 "are supported")
        return segment_sizes(values, counts)

    def _attributes(self, node, spec: OpSpec, label) -> dict:
        out = {}
        given = {a.name: a for a in node.attribute}
        for name, a in given.items():
            aspec = spec.attributes.get(name)
            if aspec is None:
                raise node_error(ImportError_, label, node.op_type,
                                 f"unknown attribute '{name}' (the op has: "
                                 f"{', '.join(spec.attributes) or 'none'})")
            if a.ref_attr_name:
                raise node_error(ImportError_, label, node.op_type,
                                 f"attribute '{name}' refers to a function attribute "
                                 "outside a function")
            kind = A.proto_kind(a)
            if kind != aspec.kind:
                raise node_error(ImportError_, label, node.op_type,
                                 f"attribute '{name}' must be {aspec.kind}, got {kind}")
            if kind in ("graph", "graphs"):
                continue
            try:
                out[name] = A.from_proto(a, kind)
            except ValueError as e:
                raise node_error(ImportError_, label, node.op_type,
                                 f"attribute '{name}': {e}") from None
        for name, aspec in spec.attributes.items():
            if name in given:
                continue
            if aspec.required:
                raise node_error(ImportError_, label, node.op_type,
                                 f"missing required attribute '{name}'")
            if aspec.has_default:
                out[name] = A.from_value(aspec.kind, aspec.default)
        return out

    def _import_region(self, region: ir.Region, graph: onnx.GraphProto) -> None:
        child = GraphImporter(self.opsets, self.value_types, parent=self)
        arg_types = [child.type_of(i.name) if i.name in self.value_types
                     else type_from_proto(i.type) for i in graph.input]
        block = region.blocks.append(*arg_types)
        for inp, arg in zip(graph.input, block.arguments):
            child.values[inp.name] = arg
        with ir.InsertionPoint(block):
            outs = child.import_graph_body(graph, f"subgraph '{graph.name}': ")
            ir.Operation.create(REGION_TERMINATOR, operands=outs)

    def import_graph_body(self, graph: onnx.GraphProto, where: str = "") -> list[ir.Value]:
        """Initializers and nodes of ``graph`` at the current insertion
        point; returns the values of the graph outputs."""
        self.import_initializers(graph)
        self.import_nodes(graph)
        outs = []
        for o in graph.output:
            v = self.lookup(o.name)
            if v is None:
                raise ImportError_(f"{where}graph output '{o.name}' is never produced")
            outs.append(v)
        return outs

