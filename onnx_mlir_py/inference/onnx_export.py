"""The ONNX dialect back to an ONNX model: what
``SessionOptions.optimized_model_filepath = "x.onnx"`` writes, the graph
after the ONNX-level passes of the session's level (shape inference,
constant folding, and from -O2 the graph rewrites).

Exported when every op of the main graph is an ONNX op whose schema version
the model's opsets select, or one differing from it in element types only
(the opsets are raised to the newest version a rewrite used, e.g. a fused
Attention), with no subgraph (If / Loop / Scan bodies) and attributes of
the kinds int, float, string, ints, floats, strings and tensor. Constants
become initializers. Otherwise :func:`export` returns None with the reason,
and the caller writes the input model instead.
"""
from __future__ import annotations

import numpy as np

_ATTR_TYPES = {"int": "INT", "float": "FLOAT", "string": "STRING", "ints": "INTS",
               "floats": "FLOATS", "strings": "STRINGS", "tensor": "TENSOR"}


class NotExportable(Exception):
    """Why the graph cannot be written as ONNX (the message)."""


def _elem(t) -> int:
    from onnx_mlir_py.dialects.onnx.types import MLIR_TO_ELEM_TYPE
    code = MLIR_TO_ELEM_TYPE.get(str(t.element_type)) if hasattr(t, "element_type") else None
    if code is None:
        raise NotExportable(f"a value of type {t} is not an ONNX tensor")
    return code


def _value_info(name: str, t, dim_params: dict[int, str] | None = None):
    from mlir import ir
    from onnx import helper
    elem = _elem(t)
    if not isinstance(t, ir.RankedTensorType):
        return helper.make_tensor_value_info(name, elem, None)
    dims = [dim_params.get(i) if d == ir.ShapedType.get_dynamic_size() and dim_params else
            None if d == ir.ShapedType.get_dynamic_size() else d
            for i, d in enumerate(t.shape)]
    return helper.make_tensor_value_info(name, elem, dims)


def _dim_params(attrs) -> dict[int, str]:
    if "onnx.dim_params" not in attrs:
        return {}
    text = attrs["onnx.dim_params"].value
    return {int(k): v for k, v in (p.split(":", 1) for p in text.split(",") if p)}


def _tensor_attr(a, blobs: dict[str, bytes]) -> np.ndarray:
    from onnx_mlir_py.dialects.onnx.types import numpy_dtype
    from onnx_mlir_py.ir_dense import dense_to_numpy
    from onnx_mlir_py.ir_resources import resource_name
    from mlir import ir
    if isinstance(a, ir.DenseElementsAttr):
        arr = dense_to_numpy(a)
    else:
        key = resource_name(a)
        t = ir.ShapedType(a.type) if key is not None else None
        dt = numpy_dtype(t.element_type) if t is not None else None
        arr = None if key not in blobs or dt is None else \
            np.frombuffer(blobs[key], dt).reshape(t.shape)
    if arr is None:
        raise NotExportable(f"a constant of type {a.type} has no numpy form")
    return arr


def _attribute(name: str, kind: str, a, blobs):
    from onnx import AttributeProto, helper, numpy_helper

    from onnx_mlir_py.dialects.onnx.opview import attr_value
    if kind not in _ATTR_TYPES:
        raise NotExportable(f"attribute {name} of kind {kind}")
    if kind == "tensor":
        value = numpy_helper.from_array(np.array(_tensor_attr(a, blobs), order="C"))
    else:
        value = attr_value(a)
        if kind in ("ints", "floats", "strings"):
            value = list(value)
    return helper.make_attribute(name, value,
                                 attr_type=getattr(AttributeProto, _ATTR_TYPES[kind]))


def _opsets(module, used: dict[str, int]) -> dict[str, int]:
    """The model's opsets, raised to the versions the ops use."""
    attrs = module.operation.attributes
    opsets = {}
    if "onnx.opset_import" in attrs:
        for na in attrs["onnx.opset_import"]:
            opsets["" if na.name == "ai.onnx" else na.name] = int(na.attr.value)
    for d, v in used.items():
        opsets[d] = max(opsets.get(d, 0), v)
    return opsets


def _signature(spec) -> tuple:
    """What a schema version says beyond its types: two versions alike in
    this differ in the element types they take (Shape 15 -> 23)."""
    return ([(v.onnx_name, v.option) for v in spec.inputs],
            [(v.onnx_name, v.option) for v in spec.outputs],
            sorted((n, a.kind, a.required, repr(a.default)) for n, a in spec.attributes.items()))


def export(module):
    """(``onnx.ModelProto`` of ``module``'s main graph, None) or (None, why)."""
    try:
        return _export(module), None
    except NotExportable as e:
        return None, str(e)


def _export(module):
    from onnx import helper, numpy_helper

    from onnx_mlir_py.dialects.onnx.opview import is_onnx_op, node_name
    from onnx_mlir_py.dialects.onnx.schema import group_values, spec_table
    from onnx_mlir_py.ir_resources import resource_blobs
    table = spec_table()
    funcs = [op for op in module.body.operations if op.operation.name == "func.func"]
    main = next((f for f in funcs if f.attributes["sym_name"].value == "main_graph"), None)
    if main is None or len(funcs) != 1:
        raise NotExportable("the module is not one main_graph function")
    block = main.regions[0].blocks[0]
    names, inputs = {}, []
    arg_attrs = main.attributes["arg_attrs"] if "arg_attrs" in main.attributes else None
    for i, arg in enumerate(block.arguments):
        da = arg_attrs[i] if arg_attrs is not None else None
        name = da["onnx.name"].value if da is not None and "onnx.name" in da else f"input_{i}"
        names[arg] = name
        inputs.append(_value_info(name, arg.type, _dim_params(da) if da is not None else {}))
    ops = [op.operation for op in block.operations]
    blobs = resource_blobs([op for op in ops if op.name == "onnx.constant"])
    nodes, initializers, used, counter, node_names = [], [], {}, [0], set()
    res_attrs = main.attributes["res_attrs"] if "res_attrs" in main.attributes else None
    out_names = [da["onnx.name"].value if da is not None and "onnx.name" in da else
                 f"output_{i}" for i, da in enumerate(res_attrs or [])]
    taken = set(names.values()) | set(out_names)

    def fresh() -> str:
        while f"t{counter[0]}" in taken:
            counter[0] += 1
        taken.add(f"t{counter[0]}")
        return f"t{counter[0]}"

    outputs = []
    for op in ops:
        if op.name == "func.return":
            outputs = list(op.operands)
            continue
        if not is_onnx_op(op) or op.name not in table.by_mlir_name:
            raise NotExportable(f"op {op.name} is not an ONNX op")
        if len(op.regions):
            raise NotExportable(f"op {op.name} has a subgraph")
        spec = table.by_mlir_name[op.name]
        if op.name == "onnx.constant" and "value" in op.attributes:    # -> an initializer
            names[op.results[0]] = fresh()
            initializers.append(numpy_helper.from_array(
                np.array(_tensor_attr(op.attributes["value"], blobs), order="C"),
                names[op.results[0]]))
            continue
        used[spec.domain] = max(used.get(spec.domain, 0), spec.since_version)
        ins = []
        for group in group_values(op.attributes, "operandSegmentSizes", spec.inputs,
                                  list(op.operands)):
            ins.extend([names[v] for v in group] if group else [""])
        while ins and ins[-1] == "":
            ins.pop()
        outs = []
        for group in group_values(op.attributes, "resultSegmentSizes", spec.outputs,
                                  list(op.results)):
            for v in group:
                names[v] = fresh()
                outs.append(names[v])
        attrs = [_attribute(n, a.kind, op.attributes[n], blobs)
                 for n, a in spec.attributes.items() if n in op.attributes]
        name = node_name(op)            # (a rewrite's ops share their source's name)
        name, k = ("", 0) if name == "<unnamed>" else (name, 0)
        while name and name in node_names:
            k += 1
            name = f"{node_name(op)}_{k}"
        node_names.add(name)
        nodes.append(helper.make_node(spec.op_type, ins, outs, domain=spec.domain, name=name))
        nodes[-1].attribute.extend(attrs)
    graph_outputs, renamed = [], {}
    input_names = {vi.name for vi in inputs} | {t.name for t in initializers}
    for i, v in enumerate(outputs):
        name = out_names[i] if i < len(out_names) else f"output_{i}"
        src = names[v]
        if src in renamed or src in input_names:
            nodes.append(helper.make_node("Identity", [src], [name]))
        else:
            renamed[src] = name
        graph_outputs.append(_value_info(name, v.type))
    for n in nodes:       # an op result that is a graph output takes the output's name
        n.input[:] = [renamed.get(x, x) for x in n.input]
        n.output[:] = [renamed.get(x, x) for x in n.output]
    opsets = _opsets(module, used)
    for op in ops:        # raised opsets must not re-resolve an op to another version
        if op.name in table.by_mlir_name and op.name != "onnx.constant":
            s = table.by_mlir_name[op.name]
            best = table.resolve(s.domain, s.op_type, opsets.get(s.domain, 0))
            if best is None or _signature(best) != _signature(s):
                raise NotExportable(f"{s.op_type} v{s.since_version} does not match the "
                                    f"opset {opsets.get(s.domain, 0)} of its domain")
    mattrs = module.operation.attributes
    graph_name = main.attributes["onnx.graph_name"].value \
        if "onnx.graph_name" in main.attributes else "main_graph"
    model = helper.make_model(
        helper.make_graph(nodes, graph_name, inputs, graph_outputs, initializers),
        opset_imports=[helper.make_opsetid(d, v) for d, v in sorted(opsets.items())],
        producer_name="onnx-mlir-py")
    need = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    model.ir_version = max(int(mattrs["onnx.ir_version"].value), need) \
        if "onnx.ir_version" in mattrs else max(need, 3)
    return model
