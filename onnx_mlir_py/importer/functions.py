"""Expand ONNX ops that have no lowering into their schema function bodies.

Many ONNX ops are *defined* by a function of simpler ops (SoftmaxCrossEntropyLoss,
NegativeLogLikelihoodLoss, Celu, MeanVarianceNormalization, Range, the window
functions, ...). When the compiler has no lowering rule for such an op (at its
schema version), the node is replaced by that function body before import, so
the model still compiles — like onnx-mlir's decomposition passes, but using the
definitions ONNX ships.

Each expanded node becomes a call to a model-local function of its own (bodies
of "context-dependent" functions depend on the node's attributes and input
types), and ``onnx.inliner`` inlines them, converting the body's opset to the
model's. Bodies may use ops that need expanding in turn, so this repeats until
nothing changes.
"""
from __future__ import annotations

from typing import Callable

import onnx
from onnx import defs

EXPANDED_DOMAIN = "onnx_mlir_py.expanded"
MAX_ROUNDS = 4

# (domain, op_type, since_version) -> True if the compiler can lower it as is.
HasLowering = Callable[[str, str, int], bool]


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


def _known_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:
        inferred = model
    g = inferred.graph
    return {vi.name: vi.type for vi in list(g.input) + list(g.value_info) + list(g.output)
            if vi.HasField("type")}


def _declare_initializer_types(model: onnx.ModelProto) -> None:
    """Give initializers that are not graph inputs (IR >= 4) a value_info:
    function bodies and the inliner's version conversion need their types."""
    g = model.graph
    known = {vi.name for vi in list(g.input) + list(g.value_info)}
    g.value_info.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                        for t in g.initializer if t.name not in known)


def _expand_round(model: onnx.ModelProto, has_lowering: HasLowering) -> bool:
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    types = None
    added = 0
    for node in model.graph.node:          # subgraph bodies are left as they are
        schema = _schema(node, opsets)
        if schema is None or has_lowering(schema.domain, node.op_type, schema.since_version):
            continue
        if not (schema.has_function or schema.has_context_dependent_function):
            continue
        if types is None:
            _declare_initializer_types(model)
            types = _known_types(model)
        body = _body(schema, node, opsets.get(schema.domain, 1), types)
        if body is None:
            continue
        _add_default_attributes(node, schema)    # bodies refer to them by name
        fn = onnx.FunctionProto()
        fn.CopyFrom(body)
        fn.name = f"{node.op_type}__{added}"
        fn.domain = EXPANDED_DOMAIN
        model.functions.append(fn)
        node.op_type, node.domain = fn.name, EXPANDED_DOMAIN
        added += 1
    if not added:
        return False
    if EXPANDED_DOMAIN not in {o.domain for o in model.opset_import}:
        model.opset_import.append(onnx.helper.make_opsetid(EXPANDED_DOMAIN, 1))
    return True


def expand_unlowered_functions(model: onnx.ModelProto, has_lowering: HasLowering
                               ) -> onnx.ModelProto:
    """A copy of ``model`` with every op that has no lowering but has an ONNX
    function body replaced by that body (main graph; repeated to a fixpoint)."""
    from onnx import inliner
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for _ in range(MAX_ROUNDS):
        if not _expand_round(m, has_lowering):
            break
        try:
            m = inliner.inline_local_functions(m, convert_version=True)
        except Exception:
            m = inliner.inline_local_functions(m)
    for i in reversed(range(len(m.opset_import))):
        if m.opset_import[i].domain == EXPANDED_DOMAIN:
            del m.opset_import[i]
    return m
