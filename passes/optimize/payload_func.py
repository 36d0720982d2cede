"""Running a transform schedule on a few ops moved into a function of their own.

Some transform ops print their payload into a diagnostic even when they
succeed: ``transform.structured.fuse_into_containing_op`` writes "could not
fuse <producer> into <containing op>" for every producer it fuses, and
printing an op numbers the values of (and verifies) the whole closest
isolated-from-above op around it, i.e. the model's function. On YOLO's
35,000-op function that is ~16 ms a fusion, six fusions per conv with an
epilogue and a bias init: 42 kernels took 3.3 s instead of 0.16 s (issue #29).

:func:`isolated` moves the ops of one kernel (its ``group``: the ops a
schedule rewrites, in program order, in one block) into a temporary
``func.func`` at the end of the module, so every print, verification and
match is over that small function, and moves what the schedule left back
afterwards. The result is the IR the schedule would have made in place:

- values the group reads from outside are function arguments, except those
  of ops without operands or regions (``arith.constant``, static
  ``tensor.empty``), which are cloned in, so patterns that look at such a
  producer (folding a slice of a splat constant or of an empty tensor) see
  it as they would in place; the clones are replaced by the originals after;
- the group's last op's outside users read a placeholder while the group is
  away and the function's results afterwards;
- constants the greedy pattern driver's folder materializes at the start of
  the function's entry block go to the start of the original function's
  entry block, in the same order (where the folder would have put them);
- the group's other ops that are still at the function's top level go
  back to their own places (marked by an anchor op and an attribute that
  their fused copies lose too); everything else goes back, in order, to
  where the group's last op was (where a schedule builds its loops).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import mlir.ir as ir
from mlir.dialects import func

_CAST = "builtin.unrealized_conversion_cast"
_POS = "onnx_mlir_py.payload_pos"      # a group op's index while it is away


# Ops are compared with == (the same operation), never hashed: a Python
# handle's hash is not stable once its op has moved.
def _within(op, roots) -> bool:
    """``op`` is one of ``roots`` or nested in one."""
    while op is not None:
        op = op.operation
        if any(op == r for r in roots):
            return True
        op = op.parent
    return False


def _defined_within(v: ir.Value, root) -> bool:
    owner = v.owner.owner if isinstance(v, ir.BlockArgument) else v.owner
    return _within(owner, [root])


def movable(group: list[ir.Operation]) -> bool:
    """The group is one block's ops whose results, but the last op's, are
    read only inside the group."""
    block = group[-1].block
    if any(op.block != block for op in group):
        return False
    return all(_within(u.owner, group) for op in group[:-1] for r in op.results for u in r.uses)


def _leaf(v: ir.Value, opaque: bool = False) -> ir.Operation | None:
    """The producer of ``v`` when it has no operands and no regions (with
    ``opaque``: and is not a constant of data, see :func:`data_constant`)."""
    if isinstance(v, ir.BlockArgument):
        return None
    o = v.owner.operation
    if len(o.operands) or len(o.regions) or (opaque and data_constant(o)):
        return None
    return o


def data_constant(o: ir.Operation) -> bool:
    """An ``arith.constant`` of elements that are not all one value: a
    weight (``dense_resource``) or an inline tensor of values."""
    if o.name != "arith.constant":
        return False
    a = o.attributes["value"]
    if isinstance(a, ir.DenseElementsAttr):
        return not a.is_splat
    return not isinstance(a, (ir.FloatAttr, ir.IntegerAttr, ir.BoolAttr))


def _external_uses(fn: ir.Operation) -> tuple[list[ir.Value], list[tuple]]:
    """The values the ops in ``fn`` read from outside it (first use first)
    and those reads, (op, operand index, index in the values)."""
    values, reads = [], []

    def visit(o):
        for i, v in enumerate(o.operands):
            if _defined_within(v, fn):
                continue
            k = next((k for k, w in enumerate(values) if w == v), None)
            if k is None:
                k = len(values)
                values.append(v)
            reads.append((o, i, k))
        return ir.WalkResult.ADVANCE
    fn.walk(visit)
    return values, reads


def _replace_outside_uses(v: ir.Value, new: ir.Value, fn: ir.Operation) -> None:
    """The uses of ``v`` outside ``fn`` read ``new``."""
    for use in list(v.uses):
        if not _within(use.owner, [fn]):
            use.owner.operands[use.operand_number] = new


@dataclass
class Payload:
    """The temporary function of :func:`isolated`: its operation (the
    payload root for a schedule), the clones of the outside leaf ops in it
    (in the order of the values they stand for), its first op (a marker:
    the folder's constants go before it) and its return."""
    op: ir.Operation
    clones: list
    sentinel: ir.Operation
    ret: ir.Operation


@contextmanager
def isolated(module: ir.Module, group: list[ir.Operation], opaque: bool = False):
    """Move ``group`` (see :func:`movable`) into a temporary function while
    the ``with`` body runs; yields its :class:`Payload`; restores the IR as
    described in the module docstring, also when the body raises.
    ``opaque``: the data constants (:func:`data_constant`: the weights) are
    arguments too, not clones, so nothing in the function depends on their
    values (:mod:`.schedule_memo` replays its result on other weights)."""
    last = group[-1]
    host_entry = _entry_block(last)
    result_types = [r.type for r in last.results]
    # the outside users of the last op's results read the placeholder
    # meanwhile; it also marks where the group goes back
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    ph = ir.Operation.create(_CAST, results=result_types or [i1], operands=[],
                             ip=ir.InsertionPoint(last))
    # the other ops' places, for those the schedule leaves at the top level
    anchors = [ir.Operation.create(_CAST, results=[i1], operands=[], ip=ir.InsertionPoint(op))
               for op in group[:-1]]
    for i, op in enumerate(group[:-1]):
        op.attributes[_POS] = ir.IntegerAttr.get(i64, i)
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("__om_payload", ir.FunctionType.get([], result_types),
                         visibility="private")
    entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        sentinel = ir.Operation.create(_CAST, results=[i1], operands=[])
        ret = func.ReturnOp(list(last.results))
    for op in group:
        op.move_before(ret)
    fop = fn.operation
    for r, p in zip(last.results, ph.results):
        _replace_outside_uses(r, p, fop)
    # (the reads, not the values' uses: a shared tensor.empty has hundreds)
    externals, reads = _external_uses(fop)
    args, clones, inner = [], [], []
    for v in externals:
        leaf = _leaf(v, opaque)
        if leaf is None:
            args.append(v)
            inner.append(entry.add_argument(v.type, v.location))
        else:
            c = leaf.clone(ir.InsertionPoint(group[0]))
            clones.append((c, leaf))
            inner.append(c.results[next(i for i, r in enumerate(leaf.results) if r == v)])
    for o, i, k in reads:
        o.operands[i] = inner[k]
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([v.type for v in args], result_types))
    try:
        yield Payload(fop, [c for c, _ in clones], sentinel, ret.operation)
    finally:
        _restore(entry, host_entry, sentinel, ret, ph, anchors, clones, args)
        fop.erase()


def _entry_block(op: ir.Operation) -> ir.Block:
    """The entry block of the function around ``op``."""
    f = op.parent
    while f.name != "func.func":
        f = f.parent
    return f.regions[0].blocks[0]


def _restore(entry: ir.Block, host_entry: ir.Block, sentinel, ret, ph, anchors, clones,
             args) -> None:
    ops = [o.operation for o in entry.operations]
    dest = {}                           # top-level op index -> its anchor

    def unmark(o):
        if _POS in o.attributes:
            if o.parent.operation == entry.owner.operation:
                dest[next(i for i, t in enumerate(ops) if t == o)] = \
                    anchors[ir.IntegerAttr(o.attributes[_POS]).value]
            del o.attributes[_POS]      # (also from the copies fused into loops)
        return ir.WalkResult.ADVANCE
    entry.owner.operation.walk(unmark)
    at = next(i for i, o in enumerate(ops) if o == sentinel.operation)
    first = host_entry.operations[0]    # (the entry block holds at least its terminator)
    for o in ops[:at]:                  # the folder's constants, in order
        o.move_before(first)
    for i, o in enumerate(ops[at + 1:], at + 1):
        if o == ret.operation or any(o == c for c, _ in clones):
            continue
        o.move_before(dest.get(i, ph))
    for c, leaf in clones:
        for r, orig in zip(c.results, leaf.results):
            r.replace_all_uses_with(orig)
        c.erase()
    for a, v in zip(entry.arguments, args):
        a.replace_all_uses_with(v)
    for p, r in zip(ph.results, ret.operands):
        p.replace_all_uses_with(r)
    ph.erase()
    for a in anchors:
        a.erase()
    ret.operation.erase()
    sentinel.erase()
