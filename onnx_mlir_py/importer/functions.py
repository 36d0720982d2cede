"""ONNX function bodies of single nodes, at the model's opsets.

Many ONNX ops are *defined* by a function of simpler ops (SoftmaxCrossEntropyLoss,
NegativeLogLikelihoodLoss, Celu, MeanVarianceNormalization, Range, the window
functions, ...). :func:`node_body` gives such a node's body as a small graph
of ops the importer can import: the pass ``expand-functions``
(``passes/expand_functions.py``) uses it to replace ops that have no lowering
rule, like onnx-mlir's decomposition passes but with the definitions ONNX ships.

The body of a "context-dependent" function depends on the node's attributes
and input types. ``onnx.inliner`` inlines the body into a one-node model,
converting the body's opset to the model's; ``onnx.shape_inference`` then
types its values.
"""
from __future__ import annotations

import onnx
from onnx import defs, helper

EXPANDED_DOMAIN = "onnx_mlir_py.expanded"


def _schema(node: onnx.NodeProto, opsets: dict[str, int]):
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    try:
        return defs.get_schema(node.op_type, opsets.get(domain, 1), domain)
    except defs.SchemaError:
        return None


def _body(schema, node: onnx.NodeProto, opset: int, types: dict[str, onnx.TypeProto]
          ) -> onnx.FunctionProto | None:
    """The function body of ``node``'s op for the model's ``opset``, or None."""
    if schema.has_function:
        vs = [v for v in schema.function_opset_versions if v <= opset]
        if vs:
            return _parse(schema.get_function_with_opset_version(max(vs)))
    if schema.has_context_dependent_function:
        vs = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
        in_types = []
        for name in node.input:
            t = types.get(name)
            if name and t is None:
                return None              # the body depends on types we do not know
            in_types.append(t.SerializeToString() if t is not None else
                            onnx.TypeProto().SerializeToString())
        if vs:
            data = schema.get_context_dependent_function_with_opset_version(
                max(vs), node.SerializeToString(), in_types)
            if data:
                return _parse(data)
    return None


def _parse(data) -> onnx.FunctionProto | None:
    if isinstance(data, onnx.FunctionProto) or not data:
        return data or None
    f = onnx.FunctionProto()
    f.ParseFromString(data)
    return f


def _add_default_attributes(node: onnx.NodeProto, schema) -> None:
    have = {a.name for a in node.attribute}
    for name, a in schema.attributes.items():
        if name not in have and a.default_value.type != onnx.AttributeProto.UNDEFINED:
            d = onnx.AttributeProto()
            d.CopyFrom(a.default_value)
            d.name = name
            node.attribute.append(d)


def node_body(node: onnx.NodeProto, opsets: dict[str, int],
              types: dict[str, onnx.TypeProto]) -> onnx.GraphProto | None:
    """``node`` replaced by its op's function body: a graph with the node's
    inputs and outputs (input names must be distinct), the body's nodes at
    ``opsets`` (domain -> version, "" for ai.onnx) and value_info from
    ``onnx.shape_inference``. ``types``: the known input types. None if the
    op has no body (for these types)."""
    schema = _schema(node, opsets)
    if schema is None or not (schema.has_function or schema.has_context_dependent_function):
        return None
    body = _body(schema, node, opsets.get(schema.domain, 1), types)
    if body is None:
        return None
    call = onnx.NodeProto()
    call.CopyFrom(node)
    _add_default_attributes(call, schema)    # bodies refer to them by name
    fn = onnx.FunctionProto()
    fn.CopyFrom(body)
    fn.name, fn.domain = f"{node.op_type}__body", EXPANDED_DOMAIN
    call.op_type, call.domain = fn.name, EXPANDED_DOMAIN
    g = helper.make_graph(
        [call], "body",
        [helper.make_value_info(n, types.get(n, onnx.TypeProto())) for n in node.input if n],
        [helper.make_value_info(n, onnx.TypeProto()) for n in node.output if n])
    m = helper.make_model(g, functions=[fn], opset_imports=[
        helper.make_opsetid(d, v) for d, v in opsets.items()] + [
        helper.make_opsetid(EXPANDED_DOMAIN, 1)])
    from onnx import inliner
    try:
        m = inliner.inline_local_functions(m, convert_version=True)
    except Exception:
        m = inliner.inline_local_functions(m)
    for i in reversed(range(len(m.opset_import))):
        if m.opset_import[i].domain == EXPANDED_DOMAIN:
            del m.opset_import[i]
    try:
        m = onnx.shape_inference.infer_shapes(m)
    except Exception:
        pass
    return m.graph
