"""Per-node profiling (``--profile``): the generated code records the time
of every ONNX node, as onnx-mlir's ``--instrument`` pass does.

``profile-nodes`` runs on the ONNX dialect, after the ONNX graph rewrites and
before lower-to-linalg: every ONNX op at the top level of a function gets a
call ``om_prof_begin(id)`` before it and ``om_prof_end(id)`` after it (the
C runtime's hooks, runtime/c/om_profile.c), ``id`` indexing the module's
node table (``PROFILE_NODES_ATTR``: names from the op's location, the node
names the importer attached, and its op type). The lowering replaces each op
in place, so its code lands between its two calls; the calls are opaque to
every later pass, which therefore keeps each node's code inside its bracket.
Ops inside an If/Loop/Scan body are timed as part of the node that holds
them (one event per run of the control-flow node).

``profile-resolve`` runs on the tensor-level IR just before codegen (after
the -O3 kernels): a bracket left with no code (a node folded into a view, or
whose code a kernel of another node took over) is removed, and a kernel that
took over other nodes' code is recorded ONCE, under the first of its nodes
in graph order, with the others listed as fused: the nodes in a bracket are
read from the locations of its ops (the -O3 rewrites give a fused kernel the
fused location of every op it replaced; MLIR's elementwise fusion keeps the
producer's ops, with their locations, in the fused body). The brackets'
ids are renumbered into the event table ``PROFILE_EVENTS_ATTR`` (one JSON
object per event: name, op_type, nodes, op_types, node_index), which the
entry wrapper turns into the trace's event records.
"""
from __future__ import annotations

import json

import mlir.ir as ir
from mlir.dialects import arith, func

from onnx_mlir_py.check_abi import (CHECK_FN, PROF_BEGIN_FN, PROF_END_FN,
                                    PROFILE_EVENTS_ATTR, PROFILE_NODES_ATTR)
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.ir_util import loc_names, module_strings, walk_ops

# ops that are no work of their own: a bracket holding only these (and
# scalar arithmetic) is empty: e.g. the output placeholder a conv leaves
# behind when a kernel placed after it (with its epilogue) took its code
_FREE = {"arith.constant", "ub.poison", "tensor.empty", "tensor.dim"}
_SCALAR_DIALECTS = ("arith.", "index.", "math.", "affine.apply")


def _free(op: ir.Operation) -> bool:
    if len(op.regions):
        return _check_only(op)
    if op.name in _FREE:
        return True
    return op.name.startswith(_SCALAR_DIALECTS) and not any(
        str(r.type).startswith(("tensor<", "vector<", "memref<")) for r in op.results)


def _check_only(op: ir.Operation) -> bool:
    """A run-time check and nothing else: ``scf.if %failed { call
    @om_check_failed(...) }`` (a node with run-time dims keeps its shape
    checks when a kernel of another node, placed before it, took its code:
    its bracket is still empty of work)."""
    if op.name != "scf.if" or len(op.results) or len(op.regions[1].blocks):
        return False
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    return len(body) <= 2 and body[0].name == "func.call" and \
        ir.FlatSymbolRefAttr(body[0].attributes["callee"]).value == CHECK_FN and \
        all(o.name == "scf.yield" for o in body[1:])


def _funcs(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]


def _declare_hooks(module: ir.Module) -> None:
    i64 = ir.IntegerType.get_signless(64)
    have = {ir.StringAttr(op.operation.attributes["sym_name"]).value
            for op in module.body.operations if op.operation.name == "func.func"}
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        for name in (PROF_BEGIN_FN, PROF_END_FN):
            if name not in have:
                func.FuncOp(name, ir.FunctionType.get([i64], []), visibility="private")


def _hook(name: str, ident: int) -> None:
    i64 = ir.IntegerType.get_signless(64)
    func.CallOp([], ir.FlatSymbolRefAttr.get(name), [arith.constant(i64, ident)])


def instrument_nodes(module: ir.Module) -> int:
    """Bracket every top-level ONNX op (but ``onnx.Constant``) of each function
    with the profiling hooks; returns the number of nodes bracketed."""
    nodes: list[list[str]] = []          # [op_type, name, more names...]
    with module.context:
        for f in _funcs(module):
            ops = [o.operation for o in f.regions[0].blocks[0].operations]
            for k, op in enumerate(ops):
                if not is_onnx_op(op):
                    continue
                v = OnnxOp(op)
                if v.op_type == "Constant":
                    continue
                names = loc_names(op.location) or [f"{v.op_type}_{len(nodes)}"]
                ident = len(nodes)
                nodes.append([v.op_type, *names])
                with ir.InsertionPoint(op), op.location:
                    _hook(PROF_BEGIN_FN, ident)
                with ir.InsertionPoint(ops[k + 1]), op.location:
                    _hook(PROF_END_FN, ident)
        if nodes:
            _declare_hooks(module)
        module.operation.attributes[PROFILE_NODES_ATTR] = ir.ArrayAttr.get(
            [ir.ArrayAttr.get([ir.StringAttr.get(s) for s in n]) for n in nodes])
    return len(nodes)


def profile_nodes(module: ir.Module) -> list[list[str]] | None:
    """The node table of :func:`instrument_nodes` ([op_type, name, ...] per
    id), None when ``module`` is not instrumented."""
    attrs = module.operation.attributes
    if PROFILE_NODES_ATTR not in attrs:
        return None
    arr = attrs[PROFILE_NODES_ATTR]
    return [[ir.StringAttr(ir.ArrayAttr(arr[i])[j]).value for j in range(len(ir.ArrayAttr(arr[i])))]
            for i in range(len(arr))]


def _callee(op: ir.Operation) -> str | None:
    if op.name != "func.call":
        return None
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _ident(call: ir.Operation) -> int:
    owner = call.operands[0].owner
    owner = owner.operation if isinstance(owner, ir.OpView) else owner
    return ir.IntegerAttr(owner.attributes["value"]).value


def _brackets(block: ir.Block) -> list[tuple[int, ir.Operation, ir.Operation, list]]:
    """(node id, begin call, end call, the ops between) of each bracket."""
    out, open_ = [], None
    for o in block.operations:
        o = o.operation
        callee = _callee(o)
        if callee == PROF_BEGIN_FN:
            open_ = (_ident(o), o, [])
        elif callee == PROF_END_FN and open_ is not None and _ident(o) == open_[0]:
            out.append((open_[0], open_[1], o, open_[2]))
            open_ = None
        elif open_ is not None:
            open_[2].append(o)
    return out


def _names_in(ops: list, known: dict) -> list[str]:
    found: list[str] = []
    for op in ops:
        for o in walk_ops(op, include_root=True):
            for n in loc_names(o.location):
                if n in known and n not in found:
                    found.append(n)
    return found


def resolve_profile(module: ir.Module) -> list[dict]:
    """Drop empty brackets, attribute fused kernels, renumber the hooks into
    the event table (see the module docstring); returns the table (also set
    as ``PROFILE_EVENTS_ATTR``). A module that is not instrumented is left
    alone (empty table)."""
    nodes = profile_nodes(module)
    if nodes is None:
        return []
    # name -> (node id, its place among the node's names): graph order, and a
    # node whose op already carried several names (a fused location) keeps their order
    known = {n: (i, k) for i, entry in enumerate(nodes) for k, n in enumerate(entry[1:])}
    op_type = {n: entry[0] for entry in nodes for n in entry[1:]}
    with module.context:
        found = [(f, b) for f in _funcs(module) for b in _brackets(f.regions[0].blocks[0])]
        removed: set[str] = set()
        kept = []
        for f, (ident, begin, end, inner) in found:
            if all(_free(o) for o in inner):
                removed.update(nodes[ident][1:])
                begin.erase()
                end.erase()
            else:
                kept.append((ident, begin, end, _names_in(inner, known)))
        events: list[dict] = []
        for ident, begin, end, names in kept:
            own = nodes[ident][1:]
            members = sorted(set(own) | {n for n in names if n in removed}, key=known.get)
            first = members[0]
            events.append({"name": first, "op_type": op_type[first],
                           "node_index": known[first][0],
                           "nodes": members, "op_types": [op_type[n] for n in members]})
            for call in (begin, end):
                with ir.InsertionPoint(call), call.location:
                    _hook(_callee(call), len(events) - 1)
                call.erase()
        module.operation.attributes[PROFILE_EVENTS_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(json.dumps(e)) for e in events])
    return events


def profile_events(module: ir.Module) -> list[dict] | None:
    """The event table :func:`resolve_profile` left on ``module`` (None:
    the module is not profiled)."""
    events = module_strings(module, PROFILE_EVENTS_ATTR)
    return None if events is None else [json.loads(e) for e in events]
