"""shape-inference: give every ONNX result a type from its op's shape rule.

Ops are visited in program order (region bodies before their parent op's
rule, so If/Loop/Scan rules see the types their bodies yield), so each rule
sees inferred operand types. Before a rule runs, ``fold`` tries to
evaluate the op on constant operands (shape sub-graphs like
Shape -> Gather -> Concat -> Reshape), which is what makes static models
fully static. A rule's answer is merged with the type the importer gave
(from ``onnx.shape_inference`` or the model): known dims are kept, and a
conflict between two known dims is an error naming the node. Unknown dims
stay dynamic (``?``).
"""
from __future__ import annotations

import mlir.ir as ir

from ..dialects.onnx.ops.control_flow import type_body_arguments
from ..dialects.onnx.opview import OnnxOp, domain_of, is_onnx_op, tensor
from ..errors import ShapeInferenceError, node_error
from ..registry import lookup
from .fold_constants import inline_constant_if, try_fold


def merge_types(old: ir.Type, new: ir.Type, op: OnnxOp, i: int) -> ir.Type:
    """Combine the importer's type with the rule's, keeping what each knows."""
    if str(old) == "!onnx.unknown" or not isinstance(old, ir.ShapedType):
        return new
    if not isinstance(new, ir.ShapedType):
        return old
    if str(old.element_type) != str(new.element_type) and \
            str(old.element_type) != "!onnx.unknown":
        raise node_error(ShapeInferenceError, op.name, op.op_type,
                         f"output #{i}: inferred element type {new.element_type}, "
                         f"but the model declares {old.element_type}")
    if not isinstance(new, ir.RankedTensorType):
        return old if isinstance(old, ir.RankedTensorType) else new
    if not isinstance(old, ir.RankedTensorType):
        return new
    if old.rank != new.rank:
        raise node_error(ShapeInferenceError, op.name, op.op_type,
                         f"output #{i}: inferred rank {new.rank} ({new}), "
                         f"but the model declares rank {old.rank} ({old})")
    dims = []
    for k in range(new.rank):
        a = None if old.is_dynamic_dim(k) else old.shape[k]
        b = None if new.is_dynamic_dim(k) else new.shape[k]
        if a is not None and b is not None and a != b:
            raise node_error(ShapeInferenceError, op.name, op.op_type,
                             f"output #{i}: inferred {new}, but the model declares {old}")
        dims.append(b if b is not None else a)
    return tensor(dims, new.element_type)


def infer_op(op: ir.Operation) -> bool:
    """Infer (or fold) one op; True if it was replaced by constants. Region
    bodies (If/Loop/Scan subgraphs) are inferred before the op's own rule,
    which reads the types their terminators yield."""
    if try_fold(op):
        return True
    inlined = inline_constant_if(op)
    if inlined is not None:
        for o in inlined:
            if is_onnx_op(o):
                infer_op(o)
        return True
    if len(op.regions):
        type_body_arguments(op)
    for region in op.regions:
        for b in region.blocks:
            _infer_block(b)
    v = OnnxOp(op)
    rule = lookup("shape", domain_of(op), v.op_type, v.version)
    if rule is None:
        return False
    types = rule(v)
    if len(types) > len(op.results):
        raise RuntimeError(f"shape rule for {v.op_type} returned {len(types)} types "
                           f"for {len(op.results)} results")
    for i, (res, t) in enumerate(zip(op.results, types)):
        if t is not None:
            res.set_type(merge_types(res.type, t, v, i))
    return False


def _infer_block(block: ir.Block) -> None:
    for op in list(block.operations):
        op = op.operation
        if not is_onnx_op(op):
            continue
        infer_op(op)


def update_function_types(module: ir.Module) -> None:
    for f in module.body.operations:
        if f.operation.name != "func.func":
            continue
        body = f.regions[0].blocks[0]
        ret = list(body.operations)[-1]
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        new = ir.FunctionType.get([a.type for a in body.arguments],
                                  [v.type for v in ret.operands])
        if str(new) != str(ftype):
            f.attributes["function_type"] = ir.TypeAttr.get(new)


def infer_shapes(module: ir.Module) -> None:
    with module.context, ir.Location.unknown():
        for f in module.body.operations:
            for region in f.operation.regions:
                for b in region.blocks:
                    _infer_block(b)
        update_function_types(module)
