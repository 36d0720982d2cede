"""The serial loop nests of the entry function as functions of their own
(issue #29: each kernel compiled once, and codegen split over all cores).

After the -O3 parallel loops became ``__om_pfor_<k>`` functions
(:mod:`.parallel_for`), what stays in the entry (``main_graph``) is every
serial loop nest: the layout copies between kernels (a conv's pixel rows
back to NCHW), bias broadcasts, pads, pools and elementwise loops below the
threading threshold. About half of ResNet-50's LLVM IR was that one
function, compiled by one ``opt`` / ``llc`` process while the other core
had the small loop bodies (:mod:`.split`), and a repeated block repeated
its copies.

Each outermost ``scf.for`` of a function that is not itself an outlined
body, and that yields no values, becomes a private function
``__om_loop_<k>(captured...)`` called in its place: the loop is moved (not
copied) into it, constants it uses are cloned in, every other value from
outside (memrefs, sizes) becomes an argument. :mod:`.dedupe` then merges
the copies that are the same function, and :mod:`.split` can give the
rest to different cores. A loop with results (a scalar reduction carried
out of it) stays where it is.

Run time: one direct call per loop nest (a few ns against loops over
whole tensors); LLVM inlines a function called once when that pays, as it
would have compiled it in place.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import func

from onnx_mlir_py.codegen.parallel_for import PREFIX as PFOR_PREFIX, captures, \
    defined_values, materialize, outside_uses, passed_values, rebind
from onnx_mlir_py.ir_util import walk_ops

PREFIX = "__om_loop_"


def _outermost_fors(fn: ir.Operation) -> list[ir.Operation]:
    """The scf.for loops of ``fn`` not nested in another loop."""
    out = []
    for op in walk_ops(fn, "scf.for"):
        p = op.parent
        while p is not None and p.name not in ("scf.for", "scf.parallel", "func.func"):
            p = p.parent
        if p is not None and p.name == "func.func" and len(op.results) == 0:
            out.append(op)
    return out


def _outline(loop: ir.Operation, name: str, parent_fn: ir.Operation) -> None:
    ops = walk_ops(loop, include_root=True)     # one walk (a Python call per op)
    uses = outside_uses(ops, defined_values(ops))
    caps = list(loop.operands)      # bounds and step, then what the body uses
    caps += [v for v in captures(uses) if v not in caps]
    passed = passed_values(caps)
    with ir.InsertionPoint(parent_fn), loop.location:
        fn = func.FuncOp(name, ir.FunctionType.get([v.type for v in passed], []),
                         visibility="private")
        # internal, like the parallel bodies: not exported from the .so, and
        # LLVM may inline (then drop) one called once
        fn.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
        entry = fn.add_entry_block()
    args = {v: entry.arguments[i] for i, v in enumerate(passed)}
    with ir.InsertionPoint(entry), loop.location:
        ret = func.ReturnOp([])
    with ir.InsertionPoint(loop), loop.location:
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), passed)
    loop.move_before(ret)
    fip = ir.InsertionPoint.at_block_begin(entry)
    cache: dict = {}
    mat = {v: materialize(v, args, fip, cache) for v in caps}
    rebind(uses, mat)      # the loop's bounds too


def outline_serial_loops(module: ir.Module) -> int:
    """Outline the serial loop nests (see the module docstring); returns
    how many became functions."""
    k = 0
    with module.context:
        fns = [op.operation for op in module.body.operations
               if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)
               and not ir.StringAttr(op.operation.attributes["sym_name"]).value.startswith(
                   (PFOR_PREFIX, PREFIX))]
        for fn in fns:
            for loop in _outermost_fors(fn):
                _outline(loop, f"{PREFIX}{k}", fn)
                k += 1
    return k
