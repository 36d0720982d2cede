"""Shared helper for op tests: our shape inference vs onnx's.

``infer_and_compare(model)`` imports ``model`` without onnx shape inference
(result types start unknown), runs ``to_onnx_ir`` and checks that every
function result type equals what ``onnx.shape_inference.infer_shapes(model,
data_prop=True)`` gives for the graph output (element type, rank, dims;
a dim onnx leaves symbolic/unknown must be dynamic here too unless
``allow_more_static``).
"""
from __future__ import annotations

import mlir.ir as ir
import onnx
from onnx import shape_inference

from onnx_mlir_py.importer import import_model
from onnx_mlir_py.dialects.onnx.types import ELEM_TYPE_TO_MLIR
from onnx_mlir_py.passes.pipeline import to_onnx_ir


def onnx_output_types(model: onnx.ModelProto) -> list[tuple[str, list | None]]:
    inferred = shape_inference.infer_shapes(model, data_prop=True, strict_mode=True)
    out = []
    for o in inferred.graph.output:
        t = o.type.tensor_type
        shape = None
        if t.HasField("shape"):
            shape = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        out.append((ELEM_TYPE_TO_MLIR[t.elem_type], shape))
    return out


def our_output_types(model: onnx.ModelProto) -> list[tuple[str, list | None]]:
    module = import_model(model, onnx_shape_inference=False)
    to_onnx_ir(module)
    with module.context:
        f = next(op for op in module.body.operations if op.operation.name == "func.func")
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        out = []
        for t in ftype.results:
            if isinstance(t, ir.RankedTensorType):
                out.append((str(t.element_type),
                            [None if t.is_dynamic_dim(i) else t.shape[i] for i in range(t.rank)]))
            elif isinstance(t, ir.ShapedType):
                out.append((str(t.element_type), None))
            else:
                out.append((str(t), None))
    return out


def infer_and_compare(model: onnx.ModelProto, allow_more_static: bool = False):
    """Assert our inferred result types match onnx's; returns ours."""
    want = onnx_output_types(model)
    got = our_output_types(model)
    assert len(got) == len(want)
    for i, ((ge, gs), (we, ws)) in enumerate(zip(got, want)):
        assert ge == we, f"output {i}: element type {ge}, onnx says {we}"
        if ws is None:
            continue
        assert gs is not None, f"output {i}: unranked, onnx says {ws}"
        assert len(gs) == len(ws), f"output {i}: shape {gs}, onnx says {ws}"
        for k, (g, w) in enumerate(zip(gs, ws)):
            if w is None and g is not None and allow_more_static:
                continue
            assert g == w, f"output {i}: shape {gs}, onnx says {ws} (dim {k})"
    return got


def make_model(nodes, inputs, outputs, opset: int, initializers=()):
    """inputs: [(name, elem, shape)], outputs: [name] (types left unknown)."""
    from onnx import helper
    g = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info(n, e, s) for n, e, s in inputs],
        [helper.make_value_info(n, onnx.TypeProto()) for n in outputs],
        initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m
