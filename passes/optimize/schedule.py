"""Running transform-dialect schedules on tagged payload ops.

A schedule is the body of ``transform.named_sequence @__transform_main``
written against ``%op`` (one payload op, found by a unique tag attribute)
and ``%func`` (its function). Each op gets its own interpreter run, so a
schedule that fails on one op (an MLIR diagnostic, raised as
``MLIRError``/``ValueError``) is logged (logger ``onnx_mlir_py.optimize``,
debug level) and the other ops are still optimised; every
transform step is semantics-preserving, so a partly applied schedule
leaves correct IR.
"""
from __future__ import annotations

import logging
from typing import Iterable

import mlir.ir as ir
from mlir.dialects.transform import interpreter

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.payload_func import isolated, movable


TAG = "onnx_mlir_py.sched"
log = logging.getLogger("onnx_mlir_py.optimize")

_WRAPPER = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match ops{{["{name}"]}} attributes{{{tag} = {id} : i64}} in %root
      : (!transform.any_op) -> !transform.any_op
    %func = transform.get_parent_op %op {{op_name = "func.func"}}
      : (!transform.any_op) -> !transform.any_op
{body}
    transform.yield
  }}
}}
"""

_FUNC_WRAPPER = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %func = transform.structured.match ops{{["func.func"]}} attributes{{{tag} = {id} : i64}}
      in %root : (!transform.any_op) -> !transform.any_op
{body}
    transform.yield
  }}
}}
"""


def static_loop_sizes(op: ir.Operation, maps: list[ir.AffineMap]) -> list[int] | None:
    """Loop extents of a linalg op with indexing ``maps``, read from its
    operands' static shapes; None when an operand is dynamic or a loop is
    not indexed directly by any operand."""
    sizes: list[int | None] = [None] * maps[0].n_dims
    for v, m in zip(op.operands, maps):
        t = v.type
        if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
            return None
        for e, n in zip(m.results, t.shape):
            if isinstance(e, ir.AffineDimExpr):
                sizes[e.position] = n
    return None if any(s is None for s in sizes) else sizes


def loop_sizes(op: ir.Operation, maps: list[ir.AffineMap]) -> list[int | None] | None:
    """Loop extents of a linalg op with indexing ``maps``, read from its
    operands' shapes: None for a loop only dynamic dims index; None (for
    the whole) when an operand is unranked or a loop is not indexed directly
    by any operand."""
    n = maps[0].n_dims
    sizes: list[int | None] = [None] * n
    seen = [False] * n
    dyn = ir.ShapedType.get_dynamic_size()
    for v, m in zip(op.operands, maps):
        t = v.type
        if not isinstance(t, ir.RankedTensorType):
            return None
        for e, d in zip(m.results, t.shape):
            if isinstance(e, ir.AffineDimExpr):
                seen[e.position] = True
                if d != dyn:
                    sizes[e.position] = d
    return sizes if all(seen) else None


def _apply(module: ir.Module, text: str, root: ir.Operation | None = None) -> None:
    """Run the schedule ``text`` on ``root`` (default: the whole module)."""
    sched = ir.Module.parse(text, module.context)
    interpreter.apply_named_sequence(module.operation if root is None else root,
                                     sched.body.operations[0], sched)


def _apply_memo(module: ir.Module, text: str, body: str, payload, memo: dict) -> None:
    """Run the schedule ``text`` on an isolated kernel (``payload``), or
    replay the result of an earlier kernel of the same text under the same
    ``body`` (:mod:`.schedule_memo`; ``memo``: key -> its Template)."""
    from onnx_mlir_py.passes.optimize import schedule_memo
    if not schedule_memo.enabled():
        _apply(module, text, payload.op)
        return
    k = schedule_memo.key(payload, body, TAG)
    template = memo.get(k)
    if template is not None:
        schedule_memo.replay(payload, template)
        return
    _apply(module, text, payload.op)
    memo[k] = schedule_memo.capture(payload)


def _touches_empty(op: ir.Operation) -> bool:
    """An operand or result has a static 0 dim (e.g. a matmul with K = 0:
    its iteration space is empty; the linalg tiling utilities assert on the
    0-trip loops such an op tiles into)."""
    for v in list(op.operands) + list(op.results):
        t = v.type
        if isinstance(t, ir.ShapedType) and t.has_rank and 0 in t.shape:
            return True
    return False


def apply_to_ops(module: ir.Module, ops: Iterable[ir.Operation], body_for, *,
                 own_op_only: bool = False, consumes=None, group_for=None) -> int:
    """Run ``body_for(op)`` (schedule text or None to skip) on each op; returns
    how many schedules applied. Failures are logged.

    ``own_op_only``: the schedules rewrite only their op (tile, vectorize,
    peel it; never ``%func`` nor a neighbour), so each run gets the op
    itself as its payload root and its match walks the op alone, not the
    whole module: linear instead of quadratic in the module (a 10,000-op
    elementwise chain: 836 runs, 27 -> <1 ms each; issue #29). Schedules
    that touch ``%func`` or fuse other ops must leave it False (a later
    op they erased would be a dangling root). Own-op schedules of equal
    text (most ops of a model share a few) also run as one batch: one
    interpreter run over all their ops (``transform.foreach``, see
    :func:`_apply_batch`) instead of a parse and a run per op.

    ``consumes(body)``: whether a schedule that applied leaves none of the
    ops it matched (their tiled copies vectorized away); when every
    schedule applied and consumes its ops, no op can still carry the tag
    and the walk that drops the tags is not needed (it visits every op of
    the vectorized module: 50,000-node chain, issue #29).

    ``group_for(op)``: the ops the schedule of ``op`` may rewrite (``op``
    among them, in program order); each run then has them moved into a
    function of their own (:func:`.payload_func.isolated`: the same IR,
    without the diagnostics a fusion prints costing O(function) each)."""
    done = 0
    clean = consumes is not None
    with module.context, ir.Location.unknown():
        tagged, names = [], set()
        for i, op in enumerate(ops):
            if _touches_empty(op):       # no work; tiling a 0-trip loop aborts MLIR
                continue
            body = body_for(op)
            if body is None:
                continue
            op.attributes[TAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
            names.add(op.name)
            tagged.append((i, body, op.name, op if own_op_only or group_for else None,
                           f"{op.name} -> {', '.join(str(r.type) for r in op.results)}"))
            clean = clean and consumes(body)
        if own_op_only:
            n_tagged = len(tagged)
            tagged, done = _apply_batches(module, tagged)
            clean = clean and done + len(tagged) == n_tagged     # no batch stopped
        # the match names the op too: each application walks the whole
        # module, and an op-name test first is ~45% cheaper per op than the
        # attribute lookup alone (53k ops: 3.5 -> 1.9 ms a walk)
        memo: dict = {}         # kernels of equal text: one run, replayed (schedule_memo.py)
        for i, body, op_name, root, name in tagged:
            try:
                text = _WRAPPER.format(tag=TAG, id=i, body=body, name=op_name)
                group = group_for(root) if group_for else None
                if group is not None and movable(group):
                    with isolated(module, group, opaque=True) as payload:
                        _apply_memo(module, text, body, payload, memo)
                else:
                    _apply(module, text, None if group_for else root)
                done += 1
            except (ir.MLIRError, ValueError) as e:   # ValueError: "Failed to apply ..."
                clean = False
                log.debug("-O3 schedule for %s not applied: %s", name, _first_line(e))
        # the tags left: on the tagged ops and the copies their schedules
        # made (tiling clones an op with its attributes), ops of the same
        # names: only those are visited (a name test per op in the walk, not
        # an attribute lookup on every op of the module; #29)
        for op in () if clean else walk_ops(module.operation, names):
            if TAG in op.attributes:
                del op.attributes[TAG]
    return done


# an own-op schedule on every op tagged ``id`` (_apply_batch): each op is
# marked STARTED before its schedule runs
_BATCH_WRAPPER = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %ops = transform.structured.match ops{{["{name}"]}} attributes{{{tag} = {id} : i64}} in %root
      : (!transform.any_op) -> !transform.any_op
    %started = transform.param.constant {started} : i64 -> !transform.param<i64>
    transform.foreach %ops : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      transform.annotate %op "{tag}" = %started : !transform.any_op, !transform.param<i64>
      %func = transform.get_parent_op %op {{op_name = "func.func"}}
        : (!transform.any_op) -> !transform.any_op
{body}
    }}
    transform.yield
  }}
}}
"""
STARTED = -1      # the tag of an op whose batched schedule has begun


def _apply_batches(module: ir.Module, tagged: list) -> tuple[list, int]:
    """Run the own-op schedules of ``tagged`` (apply_to_ops' entries) that
    several ops share as one interpreter run per schedule text; returns the
    entries left to run one by one (schedules of one op, and the ops a
    failed batch did not reach) and how many schedules applied."""
    groups: dict[tuple[str, str], list] = {}
    for entry in tagged:
        groups.setdefault((entry[2], entry[1]), []).append(entry)
    single, done, i64 = [], 0, ir.IntegerType.get_signless(64)
    for (op_name, body), entries in groups.items():
        if len(entries) == 1:
            single += entries
            continue
        gid = entries[0][0]
        for _, _, _, op, _ in entries:
            op.attributes[TAG] = ir.IntegerAttr.get(i64, gid)
        try:
            _apply(module, _BATCH_WRAPPER.format(tag=TAG, id=gid, body=body, name=op_name,
                                                 started=STARTED))
            done += len(entries)
            continue
        except (ir.MLIRError, ValueError) as e:
            log.debug("-O3 batched schedule for %d %s ops stopped: %s", len(entries),
                      op_name, _first_line(e))
        # the ops not reached (still tagged gid) go one by one; the failed
        # one is left as its schedule left it (as a failed single run)
        left = [op for op in walk_ops(module.operation, op_name)
                if TAG in op.attributes and ir.IntegerAttr(op.attributes[TAG]).value == gid]
        done += max(0, len(entries) - len(left) - 1)
        single += [(gid, body, op_name, op, op_name) for op in left]   # rooted at the op
    return single, done


# %func bound to every tagged op (a function's loops, see apply_to_funcs)
_TAGGED_WRAPPER = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %func = transform.structured.match attributes{{{tag} = {id} : i64}}
      in %root : (!transform.any_op) -> !transform.any_op
{body}
    transform.yield
  }}
}}
"""


def apply_to_funcs(module: ir.Module, body: str, *, on_loops: bool = False) -> None:
    """Run a schedule written against ``%func`` on every function with a body
    (one at a time: several transform ops want exactly one target; the
    module also declares external functions such as the run-time check).

    ``on_loops`` (a body of ``transform.apply_patterns`` only): ``%func`` is
    the ops with regions directly in the function (its loops), unless vector
    ops stand directly in its body. Patterns applied to a function (isolated
    from above) also simplify all its regions after each round; applied to
    the loops they rewrite the ops inside them only (the -O3 canonicalize
    after the vector cleanup simplifies the regions once): the cleanup of a
    10,000-node chain 4.5 -> 2.1 s CPU, the same IR after that canonicalize."""
    with module.context, ir.Location.unknown():
        funcs = [op.operation for op in module.body.operations
                 if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
        for i, f in enumerate(funcs):
            targets = [f]
            if on_loops:
                ops = [op.operation for op in f.regions[0].blocks[0].operations]
                if not any(o.name.startswith("vector.") for o in ops):
                    targets = [o for o in ops if len(o.regions)]
            for t in targets:
                t.attributes[TAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
            try:
                if targets == [f]:
                    _apply(module, _FUNC_WRAPPER.format(tag=TAG, id=i, body=body))
                elif targets:
                    _apply(module, _TAGGED_WRAPPER.format(tag=TAG, id=i, body=body), f)
            finally:
                for t in targets:
                    del t.attributes[TAG]


def _first_line(e: Exception) -> str:
    lines = [s.strip() for s in str(e).splitlines() if s.strip()]
    return " ".join(lines[:3])[:300]
