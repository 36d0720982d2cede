"""shape-inference: give every ONNX result a type from its op's shape rule.

Ops are visited in program order (region bodies before their parent op's
rule, so If/Loop/Scan rules see the types their bodies yield), so each rule
sees inferred operand types. Before a rule runs, ``fold`` tries to
evaluate the op on constant operands (shape sub-graphs like
Shape -> Gather -> Concat -> Reshape), which is what makes static models
fully static. A rule's answer is merged with the type the importer gave
(from ``onnx.shape_inference``): known dims are kept, and a conflict between
two known dims is an error naming the node. Then the model's declared types
(value_info, graph outputs) are checked: a contradiction is a
``DeclaredTypeWarning`` and the inferred type wins (``apply_declared``).
Unknown dims stay dynamic (``?``). A rank that only a declared output gives
flows back through the ops that keep their input's shape to the op that
could not infer it (``rank_from_users``).
"""
from __future__ import annotations

import warnings

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.ops.control_flow import (carried_values, relaxed_carried_types,
                                              type_body_arguments)
from onnx_mlir_py.dialects.onnx.ops.control_flow_rank import rank_if_results
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, domain_of, is_onnx_op
from onnx_mlir_py import progress
from onnx_mlir_py.errors import DeclaredTypeWarning, ShapeInferenceError, node_error
from onnx_mlir_py.dialects.onnx.attributes import DECLARED_ATTR
from onnx_mlir_py.ir_util import child_blocks, walk_ops
from onnx_mlir_py.dialects.onnx.types import UNKNOWN, meet
from onnx_mlir_py.registry import lookup
from onnx_mlir_py.passes.fold_constants import inline_constant_if, try_fold
from onnx_mlir_py.passes.verify_onnx import deferred_if, verify_nested


# Ops whose onnx.shape_inference result is known to be wrong where it
# contradicts the rule: the rule's type is taken. STFT: onnx's inference
# ignores ``onesided`` (default 1) and gives frame_length bins instead of
# frame_length // 2 + 1, which the spec, onnx.reference and the node tests'
# data give (onnx 1.23; test/python/ops/test_shape_only.py::test_stft).
ONNX_INFERENCE_WRONG = {"STFT"}


def merge_types(old: ir.Type, new: ir.Type, op: OnnxOp, i: int) -> ir.Type:
    """Combine the importer's type (from onnx.shape_inference) with the
    rule's, keeping what each knows; a contradiction is an error (one of the
    two inferences is wrong), except for the ops of ONNX_INFERENCE_WRONG."""
    if new == old:      # the usual case; meet(t, t) is t (and prints both types)
        return new
    m = meet(new, old)
    if m is not None:
        return m
    if op.op_type in ONNX_INFERENCE_WRONG and not op.spec.domain and \
            isinstance(new, ir.ShapedType) and isinstance(old, ir.ShapedType) and \
            str(old.element_type) == str(new.element_type):
        return new
    if not isinstance(new, ir.ShapedType) or not isinstance(old, ir.ShapedType):
        raise node_error(ShapeInferenceError, op.name, op.op_type,
                         f"output #{i}: inferred {new}, but onnx.shape_inference gives {old}")
    if str(old.element_type) != str(new.element_type):
        raise node_error(ShapeInferenceError, op.name, op.op_type,
                         f"output #{i}: inferred element type {new.element_type}, "
                         f"but onnx.shape_inference gives {old.element_type}")
    raise node_error(ShapeInferenceError, op.name, op.op_type,
                     f"output #{i}: inferred {new}, but onnx.shape_inference gives {old}")


def apply_declared(op: ir.Operation) -> None:
    """Check the model's declared result types (the importer's
    ``onnx.declared``) against the inferred ones. A contradiction (element
    type, rank, a static dim) is a DeclaredTypeWarning and the inferred type
    stays, as onnxruntime does (a model whose declared output rank is wrong
    still runs). A consistent declaration only gives a rank to a result
    inference could not rank: a declared static dim never replaces an
    inferred dynamic one, because the run-time shape wins, as in onnxruntime
    (torch's dynamo exporter declares an RNN's outputs with the export-time
    sequence length; Loop / Scan bodies declare the first iteration's dims)."""
    if DECLARED_ATTR not in op.attributes:
        return
    declared = op.attributes[DECLARED_ATTR]
    del op.attributes[DECLARED_ATTR]
    v = OnnxOp(op)
    for entry in declared:
        idx, name = entry.name.split(":", 1)
        dtype, res = entry.attr.value, op.results[int(idx)]
        m = meet(res.type, dtype)
        if m is None:
            warnings.warn(DeclaredTypeWarning(
                f"value '{name}' (output #{idx} of node '{v.name}', {v.op_type}): declared "
                f"{dtype}, inferred {res.type}; using the inferred type"), stacklevel=2)
        elif not isinstance(res.type, ir.RankedTensorType) and isinstance(m, ir.RankedTensorType):
            if _in_loop_body(op):
                m = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * m.rank,
                                            m.element_type)
            res.set_type(m)


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
    v = OnnxOp(op)
    if deferred_if(op):     # the branches stay: verified now (passes/verify_onnx.py)
        verify_nested(op)
    if len(op.regions):
        type_body_arguments(op)
        _fix_carried_types(v)
    for b in child_blocks(op):
        _infer_block(b)
    rule = lookup("shape", domain_of(op), v.op_type, v.version)
    types = rule(v) if rule is not None else []
    if len(types) > len(op.results):
        raise RuntimeError(f"shape rule for {v.op_type} returned {len(types)} types "
                           f"for {len(op.results)} results")
    for i, (res, t) in enumerate(zip(op.results, types)):
        if t is not None:
            res.set_type(merge_types(res.type, t, v, i))
    apply_declared(op)
    return False


MAX_BODY_ROUNDS = 8


def _fix_carried_types(v: OnnxOp) -> None:
    """Loop / Scan: give the carried body arguments types that hold for every
    iteration. The body is inferred on a throw-away copy (inference folds
    and rewrites ops, so the real body is inferred once, with the final
    types); a carried value whose yielded type differs from its argument's
    is generalised (merge: dims that change become dynamic) and the copy
    inferred again, until nothing changes."""
    if not carried_values(v):
        return
    _forget_hints(v.op)
    for _ in range(MAX_BODY_ROUNDS):
        trial = v.op.clone(ip=ir.InsertionPoint(v.op))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for b in trial.regions[0].blocks:
                    _infer_block(b)
            relaxed = relaxed_carried_types(OnnxOp(trial))
        finally:
            trial.erase()
        if relaxed is None:
            return
        for arg, t in zip(v.op.regions[0].blocks[0].arguments, relaxed):
            arg.set_type(t)
    v.fail(f"the loop-carried types did not settle after {MAX_BODY_ROUNDS} rounds of "
           "shape inference")


def _forget_hints(op: ir.Operation) -> None:
    """Drop the importer's types of a Loop / Scan and inside its body
    (keeping element types): onnx.shape_inference derived them from the
    body's declared input types, which may hold for the first iteration or
    the traced shapes only."""
    for o in [op, *walk_ops(op, is_onnx_op)]:
        for r in o.results:
            if isinstance(r.type, ir.ShapedType) and str(r.type.element_type) != UNKNOWN:
                r.set_type(ir.UnrankedTensorType.get(r.type.element_type))


def _in_loop_body(op: ir.Operation) -> bool:
    p = op.parent
    while p is not None and p.name != "func.func":
        if p.name.startswith(("onnx.loop", "onnx.scan")):
            return True
        p = p.parent
    return False


def _infer_block(block: ir.Block, report: bool = False) -> None:
    ops = list(block.operations)
    for i, op in enumerate(ops):
        if report:                       # a function body: the progress display counts
            progress.count(i, len(ops))
        op = op.operation
        if not is_onnx_op(op):
            continue
        infer_op(op)
    if report:
        progress.count(len(ops), len(ops))


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


def _same_shape_ops() -> frozenset:
    from onnx_mlir_py.dialects.onnx.ops.unary import UNARY
    return frozenset(UNARY) | {"Cast", "CastLike", "Identity"}


def rank_from_users(block: ir.Block) -> bool:
    """Give an unranked result the rank its user's result has when that user
    keeps its input's shape (a unary elementwise op, Cast, CastLike,
    Identity), visiting ops backwards, so a rank known only from a declared
    graph output reaches the op that could not infer it: ReduceSum(x, axes)
    with keepdims=0 and axes of a run-time length, followed by Sqrt and
    CastLike (ReduceL2's function body), declared [?, ?] at the output.
    Dims stay dynamic (the lowering checks them at run time); True if any
    type changed."""
    same, changed = _same_shape_ops(), False
    for op in reversed(list(block.operations)):
        op = op.operation
        if not is_onnx_op(op) or not len(op.operands) or not len(op.results) or \
                OnnxOp(op).op_type not in same or domain_of(op):
            continue
        x, t = op.operands[0], op.results[0].type
        if not isinstance(t, ir.RankedTensorType) or not isinstance(x.type, ir.ShapedType) or \
                isinstance(x.type, ir.RankedTensorType) or not isinstance(x, ir.OpResult):
            continue
        x.set_type(ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * t.rank,
                                           x.type.element_type))
        changed = True
    return changed


def infer_shapes(module: ir.Module) -> None:
    with module.context, ir.Location.unknown():
        for f in module.body.operations:
            for b in child_blocks(f):
                _infer_block(b, report=True)
                if rank_if_results(b.owner):   # then what follows gets types too
                    _infer_block(b)
                rank_from_users(b)
        update_function_types(module)
