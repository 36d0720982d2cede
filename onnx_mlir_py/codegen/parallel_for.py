"""-O3 parallel loops as direct calls of the C runtime's parallel-for.

The kernels' ``scf.forall`` loops (passes/optimize) run on the library's
thread pool (runtime/c/om_parallel.c) through one call

    om_parallel_for(n, fn, ctx)      fn(ctx, lo, hi) runs iterations [lo, hi)

instead of ``async-parallel-for`` (a coroutine, a token and a group record
per task, ~9 us per loop). Two steps:

1. :func:`outline_parallel_loops` (memref level, after the linalg ops became
   loops): each outermost loop (``scf-forall-to-parallel`` first) becomes a
   private function ``__om_pfor_<k>(lo, hi, captured values...)`` that runs
   the linearized iterations [lo, hi) (an ``scf.for``, the loop's induction
   variables recovered by div/rem; a 2-D loop is one range of n0 * n1
   iterations); the loop is replaced by a call ``__om_pfor_<k>(0, n, ...)``.
   Constants used inside are cloned into the function (LLVM folds them),
   other values defined outside become its arguments. Nested loops are
   outlined in turn (the runtime runs a loop inside a chunk inline).
2. :func:`lower_parallel_calls` (LLVM dialect): for each ``__om_pfor_<k>``
   (its memrefs now expanded into pointers and integers) a trampoline
   ``fn(ctx, lo, hi)`` that loads the captured values from a struct and calls
   it, and a launcher with the outlined function's signature that stores
   them into a stack struct and calls ``om_parallel_for``; every call of
   ``__om_pfor_<k>`` calls the launcher instead (inlined by LLVM).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, func, scf

from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.ir_util import first_op, walk_ops

PREFIX = "__om_pfor_"
PARALLEL_FOR_FN = "om_parallel_for"
# ops without operands that are cheaper to repeat inside the body than to pass
# (not memref.get_global: a weight passed as an argument leaves bodies that
# differ only in their weights the same function, merged by codegen/dedupe.py)
CLONABLE = ("arith.constant", "ub.poison", "llvm.mlir.addressof",
             "llvm.mlir.constant", "llvm.mlir.zero", "llvm.mlir.undef", "llvm.mlir.poison")


def _outermost_parallels(root, ops: list | None = None) -> list[ir.Operation]:
    """The scf.parallel loops in ``root`` not nested in another one
    (``ops``: the ops nested in ``root``, pre-order, when the caller has
    walked them)."""
    out = []
    for op in walk_ops(root, "scf.parallel") if ops is None else ops:
        if op.name != "scf.parallel":
            continue
        p = op.parent
        while p is not None and p.name not in ("scf.parallel", "func.func"):
            p = p.parent
        if p is None or p.name == "func.func" or (ops is not None and p == root):
            out.append(op)
    return out


def defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    return owner.operation if isinstance(owner, ir.OpView) or isinstance(owner, ir.Operation) \
        else None


def defined_values(ops: list) -> set:
    """The values ``ops`` define: their results and their regions' block
    arguments (a set to test operands against: cheaper than the owner of
    each operand, an OpView built per operand)."""
    out: set = set()
    for op in ops:
        out.update(op.results)
        for r in op.regions:
            for b in r.blocks:
                out.update(b.arguments)
    return out


def outside_uses(ops: list, defined: set) -> list[tuple]:
    """``(op, operand number, value)`` for every operand of ``ops`` not in
    ``defined``, in program order (``ops`` pre-order)."""
    return [(op, i, v) for op in ops for i, v in enumerate(op.operands) if v not in defined]


def captures(uses: list[tuple]) -> list[ir.Value]:
    """The values of ``uses`` (:func:`outside_uses`) without repeats, in
    first-use order."""
    return list(dict.fromkeys(v for _, _, v in uses))


def passed_values(values: list[ir.Value]) -> list[ir.Value]:
    """The ``values`` an outlined function takes as arguments: all but the
    operand-less constants of CLONABLE, which are cloned into it."""
    return [v for v in values
            if (d := defining_op(v)) is None or d.name not in CLONABLE or len(d.operands)]


def rebind(uses: list[tuple], mat: dict) -> None:
    """Replace each operand of ``uses`` (:func:`outside_uses` of the moved
    ops) that ``mat`` has a stand-in for (in the outlined function: an
    argument or a clone). Only these uses: a constant may have thousands
    of uses elsewhere, so its uses are not replaced globally."""
    for op, i, v in uses:
        n = mat.get(v)
        if n is not None:
            op.operands[i] = n


def materialize(v: ir.Value, args: dict, ip: ir.InsertionPoint, cache: dict) -> ir.Value:
    """``v`` (defined outside the loop) as seen in the new function: a clone
    of its constant, or the function argument standing for it."""
    if v in args:
        return args[v]
    if v not in cache:
        op = defining_op(v)
        cache[v] = op.clone(ip).results[0]
    return cache[v]


def _outline(loop: ir.Operation, k: int, module: ir.Module,
             parent_fn: ir.Operation) -> list[ir.Operation]:
    """Outline ``loop`` (see the module docstring); returns the loops nested
    in it that are now the outermost ones of the new function."""
    ploop = loop.operation.opview
    lbs, ubs, steps = list(ploop.lowerBound), list(ploop.upperBound), list(ploop.step)
    body = ploop.region.blocks[0]
    ivs = list(body.arguments)
    nested = walk_ops(loop, include_root=True)     # one walk for the captures and the rebind
    uses = outside_uses(nested[1:], defined_values(nested))     # (pre-order: the loop first)
    caps = captures(uses)
    inner = _outermost_parallels(loop, nested[1:])
    index = ir.IndexType.get()

    # trip counts in the parent: max(0, ceil((ub - lb) / step))
    with ir.InsertionPoint(loop), loop.location:
        zero = arith.ConstantOp(index, 0).result
        trips = []
        for lb, ub, st in zip(lbs, ubs, steps):
            span = arith.SubIOp(ub, lb).result
            span = arith.MaxSIOp(span, zero).result
            trips.append(arith.CeilDivUIOp(span, st).result)
        total = trips[0]
        for t in trips[1:]:
            total = arith.MulIOp(total, t).result

    # values the function needs from outside: the captured ones and the
    # bounds used to recover the induction variables
    needed = list(caps)
    for v in lbs + steps + trips:
        if v not in needed:
            needed.append(v)
    passed = passed_values(needed)

    name = f"{PREFIX}{k}"
    with ir.InsertionPoint(parent_fn), loop.location:
        ftype = ir.FunctionType.get([index, index] + [v.type for v in passed], [])
        fn = func.FuncOp(name, ftype, visibility="private")
        entry = fn.add_entry_block()
    args = {v: entry.arguments[2 + i] for i, v in enumerate(passed)}
    cache: dict = {}
    with ir.InsertionPoint(entry), loop.location:
        one = arith.ConstantOp(index, 1).result
        ret = func.ReturnOp([])
    with ir.InsertionPoint(ret), loop.location:
        floop = scf.ForOp(entry.arguments[0], entry.arguments[1], one)
    fip = ir.InsertionPoint.at_block_begin(entry)
    mat = {v: materialize(v, args, fip, cache) for v in needed}
    with ir.InsertionPoint(floop.body), loop.location:
        rest = floop.induction_variable
        new_ivs = [None] * len(ivs)
        for d in reversed(range(len(ivs))):
            if d > 0:
                idx = arith.RemUIOp(rest, mat[trips[d]]).result
                rest = arith.DivUIOp(rest, mat[trips[d]]).result
            else:
                idx = rest
            new_ivs[d] = arith.AddIOp(mat[lbs[d]], arith.MulIOp(idx, mat[steps[d]]).result).result
        yld = scf.YieldOp([])
    for op in list(body.operations)[:-1]:       # all but the scf.reduce terminator
        op.operation.move_before(yld)
    for iv, niv in zip(ivs, new_ivs):
        iv.replace_all_uses_with(niv)
    # the moved ops' outside operands -> arguments / clones (the ops made
    # above for the induction variables use none of the captured values)
    rebind(uses, mat)
    with ir.InsertionPoint(loop), loop.location:
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), [zero, total] + passed)
    loop.erase()
    return inner


def outline_parallel_loops(module: ir.Module) -> int:
    """Step 1 (see the module docstring); returns how many loops became
    calls. A loop nested in another one is outlined too, from the outlined
    function: at run time it splits when the outer loop runs inline (a
    single iteration, e.g. a batch of one image) and runs inline inside an
    outer loop's chunk."""
    if first_op(module, "scf.forall") is None:
        return 0
    run_pipeline(module, "scf-forall-to-parallel", "parallel loops")
    k = 0
    with module.context:
        loops = _outermost_parallels(module)
        while loops:
            nested = []         # the next level: found in the walk each outlining makes
            for loop in loops:
                fn = loop.parent
                while fn.name != "func.func":
                    fn = fn.parent
                nested += _outline(loop, k, module, fn)
                k += 1
            loops = nested
    return k


# ---- step 2: LLVM dialect ----------------------------------------------------------

def llvm_functions(module: ir.Module) -> dict[str, ir.Operation]:
    """The ``llvm.func`` ops (definitions and declarations) of an LLVM-dialect module, by name."""
    return {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "llvm.func"}


def _glue(name: str, params: list[str], declare_pfor: bool) -> str:
    """Trampoline + launcher of the outlined function ``name`` (text)."""
    caps = params[2:]
    # the struct's type spelled once, as an alias: each of its 2 * len(caps)
    # uses spelled it out (ResNet-50's glue: 1.1 MB of text, 50 ms to parse)
    st = f"!{name}_ctx"
    t = [f"{st} = !llvm.struct<({', '.join(caps) if caps else 'i8'})>"]
    call_types = ", ".join(params)
    t.append(f"llvm.func internal @{name}_t(%ctx: !llvm.ptr, %lo: i64, %hi: i64) {{")
    for i, ty in enumerate(caps):
        t.append(f"  %p{i} = llvm.getelementptr inbounds %ctx[0, {i}] : (!llvm.ptr) -> !llvm.ptr, {st}")
        t.append(f"  %a{i} = llvm.load %p{i} : !llvm.ptr -> {ty}")
    args = ", ".join(["%lo", "%hi"] + [f"%a{i}" for i in range(len(caps))])
    t.append(f"  llvm.call @{name}({args}) : ({call_types}) -> ()")
    t.append("  llvm.return")
    t.append("}")
    sig = ", ".join([f"%lo: {params[0]}", f"%hi: {params[1]}"]
                    + [f"%a{i}: {ty}" for i, ty in enumerate(caps)])
    t.append(f"llvm.func internal @{name}_l({sig}) attributes {{always_inline}} {{")
    t.append("  %one = llvm.mlir.constant(1 : i64) : i64")
    t.append(f"  %ctx = llvm.alloca %one x {st} : (i64) -> !llvm.ptr")
    for i, ty in enumerate(caps):
        t.append(f"  %p{i} = llvm.getelementptr inbounds %ctx[0, {i}] : (!llvm.ptr) -> !llvm.ptr, {st}")
        t.append(f"  llvm.store %a{i}, %p{i} : {ty}, !llvm.ptr")
    t.append(f"  %f = llvm.mlir.addressof @{name}_t : !llvm.ptr")
    t.append(f"  llvm.call @{PARALLEL_FOR_FN}(%hi, %f, %ctx) : (i64, !llvm.ptr, !llvm.ptr) -> ()")
    t.append("  llvm.return")
    t.append("}")
    # declarations so the snippet verifies on its own (not copied over)
    t.append(f"llvm.func @{name}({call_types})")
    if declare_pfor:
        t.append(f"llvm.func @{PARALLEL_FOR_FN}(i64, !llvm.ptr, !llvm.ptr)")
    return "\n".join(t)


def lower_parallel_calls(module: ir.Module) -> int:
    """Step 2 (see the module docstring); returns how many outlined loops."""
    funcs = llvm_functions(module)
    outlined = [n for n in funcs if n.startswith(PREFIX) and not n.endswith(("_t", "_l"))]
    if not outlined:
        return 0
    ctx = module.context
    with ctx, ir.Location.unknown():
        # calls -> launchers (before the trampolines, which call the function)
        for call in walk_ops(module, "llvm.call"):
            if "callee" not in call.attributes:
                continue
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            if callee in outlined:
                call.attributes["callee"] = ir.FlatSymbolRefAttr.get(callee + "_l")
        # every function's glue parsed at once (a parse per function was
        # half of this step's time: ResNet-50, 47 functions, #29)
        glue = [_glue(name, [str(a.type) for a in funcs[name].regions[0].blocks[0].arguments],
                      i == 0) for i, name in enumerate(outlined)]
        snippet = ir.Module.parse("\n".join(glue))
        wanted = {f"{name}{tail}" for name in outlined for tail in ("_t", "_l")}
        ip = ir.InsertionPoint(module.body)
        for op in snippet.body.operations:
            op = op.operation
            if ir.StringAttr(op.attributes["sym_name"]).value in wanted:
                op.clone(ip)
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for name in outlined:
            funcs[name].attributes["linkage"] = internal
        if PARALLEL_FOR_FN not in funcs:
            decl = ir.Module.parse(f"llvm.func @{PARALLEL_FOR_FN}(i64, !llvm.ptr, !llvm.ptr)")
            decl.body.operations[0].operation.clone(ir.InsertionPoint(module.body))
    return len(outlined)


def uses_parallel_for(module: ir.Module) -> bool:
    """True when an LLVM-dialect module calls ``om_parallel_for``."""
    return PARALLEL_FOR_FN in llvm_functions(module)
