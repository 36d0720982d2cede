"""ZipMap on a graph output: the output becomes its input, the score tensor,
marked with the class labels (result attribute ``onnx.zipmap``, a JSON list,
copied into the output signature); the Python runtime returns the list of
{label: score} dicts onnxruntime returns. A ZipMap anywhere else (its
sequence of maps feeding another node) is refused naming the node."""
from __future__ import annotations

import json

import mlir.ir as ir

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_zipmap import ML, zipmap_labels
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext

ZIPMAP_ATTR = "onnx.zipmap"


@lowering("ZipMap", 1, domain=ML)
def lower_zipmap(op: OnnxOp, b: LoweringContext):
    op.fail("ZipMap is supported only directly on a graph output (its sequence of maps is "
            "made by the Python runtime); export with options={'zipmap': False}")


def strip_output_zipmaps(func: ir.Operation) -> None:
    """Every ZipMap whose only use is ``func``'s return: return its input
    instead and record the labels on that result."""
    body = func.regions[0].blocks[0]
    ret = list(body.operations)[-1]
    for op in walk_ops(func, "onnx_ml.zip_map"):
        v = OnnxOp(op)
        uses = list(op.results[0].uses)
        if not uses or any(u.owner != ret for u in uses):
            continue        # refused by lower_zipmap, naming the node
        _, labels = zipmap_labels(v)
        src = v.input(0)
        if not isinstance(src.type, ir.RankedTensorType) or src.type.rank != 2:
            v.fail("the scores must be a 2-D tensor")
        res_attrs = func.attributes["res_attrs"] if "res_attrs" in func.attributes else None
        ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        results = list(ftype.results)
        dicts = []
        for i in range(len(results)):
            d = ir.DictAttr(res_attrs[i]) if res_attrs is not None else None
            dicts.append({a.name: a.attr for a in d} if d is not None else {})
        for u in uses:
            i = u.operand_number
            ret.operands[i] = src
            results[i] = src.type
            dicts[i][ZIPMAP_ATTR] = ir.StringAttr.get(json.dumps(labels))
        func.attributes["res_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs), results))
        op.erase()
