"""Build the MLIR module: ``func.func @main_graph`` over the ONNX dialect."""
from __future__ import annotations

import mlir.ir as ir
import onnx
from mlir.dialects import func

from onnx_mlir_py.context import make_context
from onnx_mlir_py.errors import ImportError_
from onnx_mlir_py.importer.model import PreparedModel, prepare_model, real_inputs
from onnx_mlir_py.importer.nodes import GraphImporter
from onnx_mlir_py.dialects.onnx.types import type_from_proto


def import_model(src, *, context: ir.Context | None = None,
                 shape_information: dict | None = None,
                 onnx_shape_inference: bool = True) -> ir.Module:
    """Path or ModelProto -> verified-as-built MLIR module (ONNX dialect).

    ``onnx_shape_inference=False`` skips ``onnx.shape_inference`` so result
    types stay ``!onnx.unknown`` until our own shape-inference pass runs
    (used to test that pass against onnx's). Ops defined by ONNX functions
    are kept as they are (the pass ``expand-functions`` expands them)."""
    prepared = prepare_model(src, shape_information, onnx_shape_inference)
    ctx = context or make_context()
    with ctx, ir.Location.unknown():
        return _build_module(prepared)


def _name_attr(name: str, tp=None) -> ir.DictAttr:
    """``onnx.name`` and, for inputs with named dynamic dims, ``onnx.dim_params``
    ("0:batch,2:seq", onnx-mlir's format): the entry point checks that dims
    with the same name are equal at run time."""
    d = {"onnx.name": ir.StringAttr.get(name)}
    params = dim_params(tp) if tp is not None else ""
    if params:
        d["onnx.dim_params"] = ir.StringAttr.get(params)
    return ir.DictAttr.get(d)


def dim_params(tp) -> str:
    """"k:name,..." for the dims of a tensor TypeProto that have a dim_param
    and no value (names with ',' or ':' cannot be written in this format and
    are left out: such dims are not tied)."""
    if not tp.HasField("tensor_type") or not tp.tensor_type.HasField("shape"):
        return ""
    out = []
    for k, d in enumerate(tp.tensor_type.shape.dim):
        if d.HasField("dim_param") and d.dim_param and not (set(d.dim_param) & set(",:")):
            out.append(f"{k}:{d.dim_param}")
    return ",".join(out)


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
    in_types = [_input_type(i, p.value_types.get(i.name, i.type)) for i in inputs]
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main_graph", ir.FunctionType.get(in_types, []))
    f.attributes["onnx.graph_name"] = ir.StringAttr.get(graph.name or "main_graph")
    block = f.add_entry_block()
    gi = GraphImporter(p.opsets, p.value_types, declared=p.declared, weights=p.weights)
    for inp, arg in zip(inputs, block.arguments):
        gi.values[inp.name] = arg
    with ir.InsertionPoint(block):
        outs = gi.import_graph_body(graph)
        func.ReturnOp(outs)
    f.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(in_types, [v.type for v in outs]))
    f.arg_attrs = ir.ArrayAttr.get([_name_attr(i.name, i.type) for i in inputs])
    f.res_attrs = ir.ArrayAttr.get([_name_attr(o.name) for o in graph.output])
    return module


def _input_type(inp: onnx.ValueInfoProto, tp: onnx.TypeProto) -> ir.Type:
    try:
        return type_from_proto(tp)
    except ValueError as e:
        raise ImportError_(f"graph input '{inp.name}': {e}") from None
