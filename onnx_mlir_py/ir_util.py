"""Walking MLIR IR: the one helper the passes, codegen and tools use to visit
nested operations (instead of hand-written loops over regions -> blocks ->
operations), and :func:`loc_name`, the ONNX node a location names.

Built on MLIR's own ``Operation.walk``; a walk for ops of some names runs
in C when :mod:`.native_walk`'s library is there (the same ops, in the same
order). The walk only collects: the result
is a list, so callers may erase or rewrite ops, and may raise, while going
through it (an exception raised inside a walk callback would come out as
a ``RuntimeError`` wrapping its traceback, and erasing during the walk is
undefined). The Python objects are not the ones block iteration gives
(``is`` differs; ``==`` compares the underlying operation).
"""
from __future__ import annotations

from collections.abc import Callable, Collection

import mlir.ir as ir

from onnx_mlir_py.native_walk import walk_names

Select = None | str | Collection[str] | Callable[[ir.Operation], bool]

_ORDERS = {"pre": ir.WalkOrder.PRE_ORDER, "post": ir.WalkOrder.POST_ORDER}


def as_operation(x) -> ir.Operation:
    """The ``ir.Operation`` of a module, an OpView or an operation."""
    return x.operation   # Module.operation, OpView.operation, Operation.operation (itself)


def _names(select: Select) -> frozenset | None:
    """The op names ``select`` stands for, None for a predicate."""
    if isinstance(select, str):
        return frozenset((select,))
    return None if select is None or callable(select) else frozenset(select)


def _matcher(select: Select) -> Callable[[ir.Operation], bool]:
    if select is None:
        return lambda op: True
    if isinstance(select, str):
        return lambda op: op.name == select
    if callable(select):
        return select
    names = frozenset(select)
    return lambda op: op.name in names


def _walk_names(top: ir.Operation, select: Select, order: str, include_root: bool,
                exclude: Collection[str] | None = None):
    """_walk's common case (all ops, ops of some names, or all but some
    names: ``exclude``; no prune, not only the first): a callback that
    cannot raise and only tests the name,
    the root dropped after the walk (the first op a pre-order walk visits,
    the last a post-order one) instead of compared with every op: ~1/3 of
    the walk's time (#29: -O3 and codegen walk the module ~30 times)."""
    if exclude is None and select is not None:
        found = walk_names(top, select, order)     # in C when it can (native_walk.py)
        if found is not None:
            return _without_root(found, top, order, include_root)
    return py_walk_names(top, select, order, include_root, exclude)


def _without_root(out: list, top: ir.Operation, order: str, include_root: bool) -> list:
    """``out`` (a walk's ops) without ``top`` unless ``include_root``: the
    first op a pre-order walk visits, the last a post-order one (an excluded
    root is not in ``out``; its first op is never ``top``)."""
    end = 0 if order == "pre" else -1
    if not include_root and out and out[end] == top:
        del out[end]
    return out


def py_walk_names(top: ir.Operation, select: Select, order: str, include_root: bool,
                  exclude: Collection[str] | None = None):
    """:func:`_walk_names` with the bindings' walk (a Python call per op)."""
    out: list[ir.Operation] = []
    advance = ir.WalkResult.ADVANCE
    if exclude is not None:
        skip = frozenset(exclude)

        def visit(op: ir.Operation):
            if op.name not in skip:
                out.append(op)
            return advance
    elif select is None:
        def visit(op: ir.Operation):
            out.append(op)
            return advance
    elif isinstance(select, str):
        def visit(op: ir.Operation):
            if op.name == select:
                out.append(op)
            return advance
    else:
        names = frozenset(select)

        def visit(op: ir.Operation):
            if op.name in names:
                out.append(op)
            return advance
    top.walk(visit, _ORDERS[order])
    return _without_root(out, top, order, include_root)


def _walk(root, select: Select, order: str, include_root: bool, first: bool,
          prune: Select = None):
    top = as_operation(root)
    if not first and prune is None and not callable(select):
        return _walk_names(top, select, order, include_root)
    names = _names(select)
    if not first and prune is not None and order == "pre" and names is not None \
            and names == _names(prune) and (include_root or top.name not in names):
        # the found ops' insides not visited: in C when it can (native_walk.py)
        found = walk_names(top, select, order, skip_found=True)
        if found is not None:
            return found
    keep = _matcher(select)
    skip = None if prune is None else _matcher(prune)
    out: list[ir.Operation] = []
    error: list[BaseException] = []

    def visit(op: ir.Operation):
        if not include_root and op == top:
            return ir.WalkResult.ADVANCE
        try:
            if keep(op):
                out.append(op)
                if first:
                    return ir.WalkResult.INTERRUPT
            if skip is not None and skip(op):
                return ir.WalkResult.SKIP
        except Exception as e:   # re-raised as itself after the walk
            error.append(e)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    top.walk(visit, _ORDERS[order])
    if error:
        raise error[0]
    return out


def walk_ops(root, select: Select = None, *, order: str = "pre",
             include_root: bool = False, prune: Select = None,
             exclude: Collection[str] | None = None) -> list[ir.Operation]:
    """Every operation nested (at any depth) in ``root`` (an ``ir.Module``,
    ``ir.Operation`` or OpView), in ``order`` "pre" (an op before the ops in
    its regions: program order) or "post" (after them), ``root`` itself only
    with ``include_root``. ``select`` keeps only ops of one name (a str),
    of a set of names, or for which a predicate is true. ``prune`` (same
    forms; "pre" order only): the ops it names are visited but not entered
    (a walk for top-level ops that need not visit every op of a
    ``linalg.generic`` body: each op visited costs a Python call).
    ``exclude`` (without ``select`` and ``prune``): every op but those of
    these names (a name test per op, as ``select``'s names; a predicate
    ``select`` costs a guarded Python call per op)."""
    assert prune is None or order == "pre", "prune: pre-order walks only"
    if exclude is not None:
        assert select is None and prune is None, "exclude: without select and prune"
        return _walk_names(as_operation(root), None, order, include_root, exclude)
    return _walk(root, select, order, include_root, first=False, prune=prune)


def first_op(root, select: Select = None) -> ir.Operation | None:
    """The first op nested in ``root`` (pre-order) that ``select`` keeps,
    or None; the walk stops there."""
    found = _walk(root, select, "pre", False, first=True)
    return found[0] if found else None


def child_blocks(op) -> list[ir.Block]:
    """The blocks of ``op``'s own regions (one level: no nested ops' blocks)."""
    return [b for r in as_operation(op).regions for b in r.blocks]


def module_strings(module: ir.Module, name: str) -> tuple[str, ...] | None:
    """The strings of ``module``'s array attribute ``name`` (None when absent)."""
    attrs = module.operation.attributes
    if name not in attrs:
        return None
    arr = attrs[name]
    return tuple(ir.StringAttr(arr[i]).value for i in range(len(arr)))


def loc_name(loc: ir.Location) -> str | None:
    """The node name in ``loc`` (the importer gives each ONNX op
    ``loc("<node name>")``; fused locations hold it inside; for code inlined
    into a node's, the call site's name, else the callee's), or None."""
    try:
        if loc.is_a_name():
            return loc.name_str
        if loc.is_a_fused():
            for sub in loc.locations:
                n = loc_name(sub)
                if n:
                    return n
        if loc.is_a_callsite():
            return loc_name(loc.caller) or loc_name(loc.callee)
    except Exception:                # a location kind the bindings do not expose
        return None
    return None


def loc_names(loc: ir.Location) -> list[str]:
    """Every node name in ``loc``, in order, without repeats: a fused location
    (the ops of several nodes merged into one kernel) names each of them;
    code inlined into a node's names the call site's nodes (else the
    callee's)."""
    out: list[str] = []

    def visit(x: ir.Location) -> None:
        try:
            if x.is_a_name():
                if x.name_str not in out:
                    out.append(x.name_str)
            elif x.is_a_fused():
                for sub in x.locations:
                    visit(sub)
            elif x.is_a_callsite():
                before = len(out)
                visit(x.caller)
                if len(out) == before:
                    visit(x.callee)
        except Exception:            # a location kind the bindings do not expose
            return
    visit(loc)
    return out


def rename_symbol_refs(root, op_name: str, attr: str, renamed: dict[str, str]) -> None:
    """Point the flat symbol reference ``attr`` of every ``op_name`` op in
    ``root`` at its new name in ``renamed`` (old -> new), in one walk."""
    if not renamed:
        return
    for op in walk_ops(root, op_name):
        name = ir.FlatSymbolRefAttr(op.attributes[attr]).value
        if name in renamed:
            op.attributes[attr] = ir.FlatSymbolRefAttr.get(renamed[name])
