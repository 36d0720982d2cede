"""Name the ONNX node behind each heap allocation of the model code, so an
allocation that fails reports it ("node 'cos' (ConstantOfShape): out of
memory: ...").

Every ``memref.alloc`` still carries the location of the op it came from
(the importer gives each ONNX op ``loc("<node name>")``; lowering, -O3 and
bufferization keep it). Before ``finalize-memref-to-llvm`` turns the allocs
into calls of the C runtime's ``_mlir_memref_to_llvm_alloc``, each gets a
call ``om_alloc_site(id)`` in front of it: the id of its node in the
module's table (``ALLOC_SITES_ATTR``, which the entry wrapper turns into
``om_alloc_sites[]``), or -1 when the location names no lowered node (so a
failure never names the node of an earlier allocation). The runtime keeps
the id per thread; one call per allocation, next to a malloc.

Allocations inside an -O3 parallel loop run on the pool's threads: the
pool (runtime/c/om_parallel.c) gives each chunk the caller's id and a
failure in a chunk fails the call on the caller's thread.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, func

from onnx_mlir_py.check_abi import ALLOC_SITE_FN, ALLOC_SITES_ATTR, NODE_TYPES_ATTR
from onnx_mlir_py.ir_util import loc_name, module_strings, walk_ops

_ALLOCS = ("memref.alloc", "memref.realloc")
# the op names mark_alloc_sites looks at (a caller's walk: see there)
ALLOC_SITE_OPS = _ALLOCS + ("func.call",)


def node_types(module: ir.Module) -> dict[str, str]:
    """Node name -> op type of the nodes lowered into ``module``."""
    attrs = module.operation.attributes
    if NODE_TYPES_ATTR not in attrs:
        return {}
    d = ir.DictAttr(attrs[NODE_TYPES_ATTR])
    return {d[i].name: ir.StringAttr(d[i].attr).value for i in range(len(d))}


def _func_of(op: ir.Operation) -> ir.Operation | None:
    p = op.parent
    while p is not None and p.name not in ("func.func", "llvm.func"):
        p = p.parent
    return p


def _sym(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _allocating_functions(allocs: list, calls: list) -> set[str]:
    """Functions that allocate, directly or through the functions they call
    (``calls``: every ``func.call``)."""
    edges = [(_sym(f), _callee(c)) for c in calls if (f := _func_of(c)) is not None]
    out = {_sym(f) for a in allocs if (f := _func_of(a)) is not None}
    grew = True
    while grew:
        grew = False
        for caller, callee in edges:
            if callee in out and caller not in out:
                out.add(caller)
                grew = True
    return out


def mark_alloc_sites(module: ir.Module, seed: tuple[str, ...] = (),
                     ops: list | None = None) -> tuple[str, ...]:
    """Put ``om_alloc_site(id)`` before every allocation of ``module`` (see
    the module docstring) and before every call from a node's code of a
    function that allocates (the -O3 kernels: their own allocations, with
    the kernel's locations, keep the caller's id); returns the table (also
    set as ALLOC_SITES_ATTR). ``seed``: a table to extend (ids kept), so
    that variants of one model linked into one library share it. ``ops``:
    the module's ops of :data:`ALLOC_SITE_OPS` in program order, found by
    the caller's walk; None walks the module."""
    # one walk (each op visited is a Python call: ResNet-50 ~60k ops)
    found = walk_ops(module, ALLOC_SITE_OPS) if ops is None else ops
    allocs = [op for op in found if op.name != "func.call"]
    all_calls = [op for op in found if op.name == "func.call"]
    types = node_types(module)
    sites: dict[str, int] = {s: i for i, s in enumerate(seed)}
    with module.context:
        alloc_fns = _allocating_functions(allocs, all_calls)
        called = {_callee(c) for c in all_calls}
        calls = [c for c in all_calls if _callee(c) in alloc_fns]
        i64 = ir.IntegerType.get_signless(64)
        if allocs:
            with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
                func.FuncOp(ALLOC_SITE_FN, ir.FunctionType.get([i64], []), visibility="private")
        for op in allocs + calls:
            name = loc_name(op.location)
            if name is not None and name in types:
                sid = sites.setdefault(f"node '{name}' ({types[name]})", len(sites))
            elif op.name == "func.call" or _sym(_func_of(op)) in called:
                continue        # a kernel's: the caller's id stands
            else:
                sid = -1
            with ir.InsertionPoint(op), op.location:
                func.CallOp([], ir.FlatSymbolRefAttr.get(ALLOC_SITE_FN),
                            [arith.constant(i64, sid)])
        table = tuple(sites)
        module.operation.attributes[ALLOC_SITES_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(s) for s in table])
    return table


def alloc_sites(module: ir.Module) -> tuple[str, ...]:
    """The table :func:`mark_alloc_sites` left on ``module`` (empty if none)."""
    return module_strings(module, ALLOC_SITES_ATTR) or ()
