"""lower-to-linalg: ONNX dialect -> upstream tensor-level MLIR.

1. Sweep: every ONNX op must have a ``lower`` rule for its exact schema
   version; otherwise ONE ``UnsupportedOpsError`` lists all of them and the
   module is left untouched.
2. Function signatures: ``uiN`` -> ``iN`` (``to_signless``); ``onnx.name``
   arg/res attributes are kept, ``onnx.dtype`` records what was lost.
3. Ops are lowered in program order: ``rule(op, b)`` runs with the insertion
   point before the op; its results replace the op's, and the op is erased.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, domain_of, is_onnx_op
from onnx_mlir_py import progress
from onnx_mlir_py.errors import (CompileError, NeedsInputShapesError, OnnxMlirError,
                                 UnsupportedOpsError, node_error)
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.registry import lookup
from onnx_mlir_py.check_abi import CHECKS_ATTR, NODE_TYPES_ATTR
from onnx_mlir_py.passes.check_sizes import check_sizes
from onnx_mlir_py.passes.onnx_to_linalg.ml_outputs import prepare_ml_outputs
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, is_storage_type,
                                                        is_string_type, is_value_type, lost_dtype, to_signless)


def _funcs(module: ir.Module):
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _walk_onnx(module: ir.Module) -> list[ir.Operation]:
    """The ONNX ops of every function, pre-order (an op before its bodies)."""
    return [o for f in _funcs(module) for o in walk_ops(f, is_onnx_op)]


def _rule_for(op: ir.Operation):
    v = OnnxOp(op)
    return v, lookup("lower", domain_of(op), v.op_type, v.version)


def check_supported(module: ir.Module) -> None:
    missing = []
    for op in _walk_onnx(module):
        v, rule = _rule_for(op)
        if rule is None:
            dom = domain_of(op)
            missing.append((f"{dom + '.' if dom else ''}{v.op_type}"
                            + ("" if v.spec.newest else f" (v{v.version})"), v.name))
        elif op.regions and any(len(r.blocks) for r in op.regions) and \
                not getattr(rule, "handles_regions", False):
            missing.append((f"{v.op_type} (with subgraph)", v.name))
    if missing:
        raise UnsupportedOpsError("no lowering", missing)


def _dict_attr(arr, i: int) -> dict:
    if arr is None or i >= len(arr):
        return {}
    d = ir.DictAttr(arr[i])
    return {n.name: n.attr for n in (d[j] for j in range(len(d)))}


def _unranked_result_node(f: ir.Operation) -> None:
    """A function result of unknown rank made by an ONNX op: fail naming it
    (its rank depends on values or dims not known at compile time)."""
    blocks = f.regions[0].blocks
    if not len(blocks):
        return
    ret = blocks[0].operations[len(blocks[0].operations) - 1]
    for v in ret.operands:
        owner = v.owner
        if not isinstance(v.type, ir.UnrankedTensorType) or isinstance(owner, ir.Block):
            continue
        owner = _first_unranked(owner.operation if isinstance(owner, ir.OpView) else owner)
        if owner.name.startswith("onnx."):
            on = OnnxOp(owner)
            k = next(i for i, r in enumerate(owner.results)
                     if isinstance(r.type, ir.UnrankedTensorType))
            why, cls = "it depends on dims or values known only at run time", CompileError
            if on.op_type == "If":      # the input shapes may fold the condition
                cls = NeedsInputShapesError
                from onnx_mlir_py.dialects.onnx.ops.control_flow import yields
                then, other = (yields(on, on.spec.regions.index(n))[k]
                               for n in ("then_branch", "else_branch"))
                why = f"then_branch yields {then.type} and else_branch {other.type}"
            raise node_error(cls, on.name, on.op_type,
                             f"the rank of result #{k} ({owner.results[k].type}) is not "
                             f"known at compile time ({why})")


def _first_unranked(op: ir.Operation) -> ir.Operation:
    """The ONNX op upstream of ``op`` where the rank got lost: follow
    operands of unknown rank made by ONNX ops (an If whose branches yield
    different ranks, not the Relu after it)."""
    seen = set()
    while True:
        nxt = None
        for v in op.operands:
            o = v.owner
            if isinstance(v.type, ir.UnrankedTensorType) and not isinstance(o, ir.Block):
                o = o.operation if isinstance(o, ir.OpView) else o
                if o.name.startswith("onnx.") and o not in seen:
                    nxt = o
                    break
        if nxt is None:
            return op
        seen.add(nxt)
        op = nxt


def convert_signature(f: ir.Operation, b: LoweringContext) -> None:
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    _unranked_result_node(f)
    for t in list(ftype.inputs) + list(ftype.results):
        if not isinstance(t, ir.RankedTensorType) and not is_value_type(t):
            raise CompileError(f"function '{ir.StringAttr(f.attributes['sym_name']).value}': "
                               f"signature type {t} is not a ranked tensor; run shape-inference")
    arg_attrs = f.attributes["arg_attrs"] if "arg_attrs" in f.attributes else None
    res_attrs = f.attributes["res_attrs"] if "res_attrs" in f.attributes else None

    def attrs_for(arr, types):
        out, changed = [], False
        for i, t in enumerate(types):
            d = _dict_attr(arr, i)
            if is_value_type(t):     # the signature's element type (codegen/signature.py)
                d["onnx.type"] = ir.StringAttr.get(str(t))
                changed = True
            lost = lost_dtype(t)
            if lost and "onnx.dtype" not in d:
                d["onnx.dtype"] = ir.StringAttr.get(lost)
                changed = True
            out.append(ir.DictAttr.get(d))
        return out, changed

    new_args, ch_a = attrs_for(arg_attrs, ftype.inputs)
    new_res, ch_r = attrs_for(res_attrs, ftype.results)
    if ch_a or (arg_attrs is not None):
        f.attributes["arg_attrs"] = ir.ArrayAttr.get(new_args)
    if ch_r or (res_attrs is not None):
        f.attributes["res_attrs"] = ir.ArrayAttr.get(new_res)
    f.attributes["function_type"] = ir.TypeAttr.get(to_signless(ftype))
    if len(f.regions[0].blocks):
        for a in f.regions[0].blocks[0].arguments:
            old = a.type
            a.set_type(to_signless(old))
            b.record(a, old)


def _check_declared_dims(v: OnnxOp, b: LoweringContext, nv: ir.Value,
                         want: ir.RankedTensorType, i: int) -> None:
    """A result the lowering computed with a dynamic dim that its type fixes
    (a declared or inferred static dim) is cast to that type: check at run time
    that they agree, so a declaration that lies (an exporter's export-time
    sequence length) fails naming the node instead of reading past a buffer."""
    t = nv.type
    for k in range(t.rank):
        if t.is_dynamic_dim(k) and not want.is_dynamic_dim(k):
            d = b.dim(nv, k)
            ok = arith.cmpi(arith.CmpIPredicate.eq, d, b.index(int(want.shape[k])))
            b.require(ok, f"node '{v.name}' ({v.op_type}): result #{i} has {{0}} along dim "
                          f"{k}, but its type (declared in the model, or inferred) says "
                          f"{int(want.shape[k])}", d)


# Ops that may see the one-byte storage types (float8, float4, int4, int2 as
# i8 bits): they move elements or interpret them through cast_bits. Any other
# op would compute on the bits, so it is refused (never silently wrong).
STORAGE_OPS = {"Cast", "CastLike", "Constant", "QuantizeLinear", "DequantizeLinear", "Identity",
               "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Shape", "Size",
               "If", "Loop", "Scan", "Pad"}


# Ops that may see string tensors (i64 pointer elements, docs/design.md):
# they move elements, or are string ops that call the C runtime. Any other
# op would compute on the addresses, so it is refused naming the node.
STRING_OPS = {"Constant", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
              "Transpose", "Shape", "Size", "Gather", "Concat", "Slice", "Expand", "Where",
              "Equal", "StringConcat", "RegexFullMatch", "StringSplit",
              "StringNormalizer", "LabelEncoder", "TfIdfVectorizer", "Cast", "CastLike"}


def _check_storage_types(v: OnnxOp, b: LoweringContext) -> None:
    if v.op_type not in STRING_OPS and any(
            is_string_type(t) for t in [b.onnx_elem(x) for x in v.op.operands] +
            [r.type for r in v.op.results]):
        v.fail(f"string tensors are not supported by {v.op_type}")
    if v.op_type in STORAGE_OPS:
        return
    types = [b.onnx_elem(x) for x in v.op.operands] + \
        [r.type.element_type for r in v.op.results if isinstance(r.type, ir.ShapedType)]
    for t in types:
        if is_storage_type(t):
            v.fail(f"element type {t} is not supported by {v.op_type}")


def lower_op(op: ir.Operation, b: LoweringContext) -> None:
    v, rule = _rule_for(op)
    _check_storage_types(v, b)
    with ir.InsertionPoint(op), op.location:
        b.node = v
        b.node_types[v.name] = v.op_type
        try:
            new = rule(v, b)
        finally:
            b.node = None
        if len(new) != len(op.results):
            raise CompileError(f"lowering of {v.op_type} v{v.version} returned {len(new)} "
                               f"values for {len(op.results)} results")
        for i, (res, nv) in enumerate(zip(op.results, new)):
            want = to_signless(res.type)
            if nv.type != want:
                ok = (isinstance(want, ir.RankedTensorType) and
                      isinstance(nv.type, ir.RankedTensorType) and
                      want.rank == nv.type.rank and want.element_type == nv.type.element_type)
                if not ok:
                    raise node_error(CompileError, v.name, v.op_type,
                                     f"lowering produced {nv.type} for result #{i}, "
                                     f"expected {want}")
                from mlir.dialects import tensor
                _check_declared_dims(v, b, nv, want, i)
                nv = tensor.cast(want, nv)
            b.record(nv, res.type)
            res.replace_all_uses_with(nv)
    op.erase()


def lower_to_linalg(module: ir.Module) -> None:
    with module.context, ir.Location.unknown():
        for f in _funcs(module):
            if len(f.regions[0].blocks):
                prepare_ml_outputs(f)         # ZipMap / string labels: by the Python runtime
        check_supported(module)
        check_sizes(module)           # before MLIR computes strides (int64)
        b = LoweringContext(module)
        for f in _funcs(module):
            if len(f.regions[0].blocks):     # not a declaration (--profile's hooks)
                convert_signature(f, b)
        ops = _walk_onnx(module)
        for i, op in enumerate(ops):
            progress.count(i, len(ops))
            try:
                lower_op(op, b)
            except OnnxMlirError:
                raise
            except ir.MLIRError as e:
                name = OnnxOp(op).name
                raise node_error(CompileError, name, op.name, f"lowering failed: {e}") from None
        progress.count(len(ops), len(ops))
        if b.check_messages:
            module.operation.attributes[CHECKS_ATTR] = ir.ArrayAttr.get(
                [ir.StringAttr.get(m) for m in b.check_messages])
        module.operation.attributes[NODE_TYPES_ATTR] = ir.DictAttr.get(
            {k: ir.StringAttr.get(t) for k, t in b.node_types.items()})
        # func.return operand types now signless: fix function types to match
        for f in _funcs(module):
            if not len(f.regions[0].blocks):
                continue
            body = f.regions[0].blocks[0]
            ret = list(body.operations)[-1]
            ft = ir.FunctionType.get([a.type for a in body.arguments],
                                     [v.type for v in ret.operands])
            f.attributes["function_type"] = ir.TypeAttr.get(ft)
