"""Build the MLIR module: ``func.func @main_graph`` over the ONNX dialect."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import func

from ..context import make_context
from .model import PreparedModel, prepare_model, real_inputs
from .nodes import GraphImporter
from .types import type_from_proto


def import_model(src, *, context: ir.Context | None = None,
                 shape_information: dict | None = None,
                 onnx_shape_inference: bool = True,
                 expand_functions=None) -> ir.Module:
    """Path or ModelProto -> verified-as-built MLIR module (ONNX dialect).

    ``onnx_shape_inference=False`` skips ``onnx.shape_inference`` so result
    types stay ``!onnx.unknown`` until our own shape-inference pass runs
    (used to test that pass against onnx's). ``expand_functions``: see
    :func:`.model.prepare_model` (the compiler passes :func:`has_lowering`)."""
    prepared = prepare_model(src, shape_information, onnx_shape_inference, expand_functions)
    ctx = context or make_context()
    with ctx, ir.Location.unknown():
        return _build_module(prepared)


def _name_attr(name: str) -> ir.DictAttr:
    return ir.DictAttr.get({"onnx.name": ir.StringAttr.get(name)})


def _build_module(p: PreparedModel) -> ir.Module:
    model, graph = p.model, p.model.graph
    module = ir.Module.create()
    m_attrs = module.operation.attributes
    m_attrs["onnx.opset_import"] = ir.DictAttr.get({
        (d or "ai.onnx"): ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
        for d, v in sorted(p.opsets.items())})
    m_attrs["onnx.ir_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                    model.ir_version)
    if model.producer_name:
        m_attrs["onnx.producer"] = ir.StringAttr.get(
            f"{model.producer_name} {model.producer_version}".strip())

    inputs = real_inputs(graph)
    in_types = [type_from_proto(p.value_types.get(i.name, i.type)) for i in inputs]
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main_graph", ir.FunctionType.get(in_types, []))
    f.attributes["onnx.graph_name"] = ir.StringAttr.get(graph.name or "main_graph")
    block = f.add_entry_block()
    gi = GraphImporter(p.opsets, p.value_types)
    for inp, arg in zip(inputs, block.arguments):
        gi.values[inp.name] = arg
    with ir.InsertionPoint(block):
        outs = gi.import_graph_body(graph)
        func.ReturnOp(outs)
    f.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(in_types, [v.type for v in outs]))
    f.arg_attrs = ir.ArrayAttr.get([_name_attr(i.name) for i in inputs])
    f.res_attrs = ir.ArrayAttr.get([_name_attr(o.name) for o in graph.output])
    return module


def has_lowering(domain: str, op_type: str, since_version: int) -> bool:
    """True if ``lower-to-linalg`` has a rule for this op version."""
    from ..registry import lookup
    return lookup("lower", domain, op_type, since_version) is not None
