"""The -O3 kernels as functions of their own at the tensor level, the
copies merged before bufferization (issue #29: each kernel compiled once).

After passes/optimize, the entry function (``main_graph``) is a sequence of
kernels: each conv, matmul, pool or fused elementwise group is one
outermost ``scf.forall`` (threaded) or ``scf.for`` loop nest over tensors,
tiled, packed and vectorized, between the layout ops that connect them.
A repeated block repeats its kernels op for op (ResNet-50's bottleneck
blocks repeat within each stage), and every later stage of the compile
(bufferization, the loop and LLVM lowerings) did the same work again for
each copy; :mod:`.dedupe` merged the copies only after all of that.

:func:`outline_kernels` moves each outermost loop nest of the entry into a
private function ``__om_kernel*`` called in its place, with upstream's
``transform.loop.outline`` (one interpreter run for all of them):

- every value from outside becomes an argument: activations, sizes, the
  packed weights (so two kernels that differ only in their weights are the
  same function) and the loop's destinations (its ``shared_outs`` /
  ``iter_args`` inits), which the function writes in place and returns.
  One-shot bufferization analyses the functions with the module
  (``bufferize-function-boundaries``): a returned destination is
  equivalent to its argument, so the call writes into the caller's buffer
  as the loop did;
- index constants are cloned in by the outlining; scalar and vector
  constants and ``ub.poison`` passed as arguments are cloned in here, and
  the arguments left unused are removed (in a split module a kernel is an
  external function of the part that calls it, where unused arguments
  would still be built and passed);
- an argument has the identity layout, so a slice passed to one would be
  copied: a loop whose destination is a slice of another tensor stays in
  place, and a slice the loop only reads is taken inside the loop (its
  view ops cloned in; views cost nothing) from the whole tensor;
- a loop whose result is inserted into a larger tensor (a Concat's part)
  stays in place too: there ``eliminate-empty-tensors`` makes it write into
  the larger tensor directly, which it cannot do through a call.

The functions that print the same (name left out) are then merged: what is
left goes through bufferization and the lowerings once, and the
memref-level outlining of parallel loops (:mod:`.parallel_for`) works
inside them as before. Run time: one call per kernel.

It runs twice: in the -O3 stage, once the conv and matmul kernels are loop
nests (``passes.optimize.outline_kernel_functions``, before the elementwise
fusion, the math approximation, the vectorization, the vector cleanups and
the last canonicalize, which then run over each distinct kernel once:
ResNet-50's 92 kernels are 47 functions), and at codegen's start on what
the stage left in the entry (the elementwise loops vectorized after it;
every kernel at -O0..-O2). Each call takes a function-name stem no
function has yet.
"""
from __future__ import annotations

import weakref

import mlir.ir as ir
from mlir.dialects import func
from mlir.dialects.transform import interpreter

from onnx_mlir_py.codegen.buffer_origin import is_slice
from onnx_mlir_py.codegen.dedupe import shared_types
from onnx_mlir_py.codegen.parallel_for import defining_op
from onnx_mlir_py.codegen.signature import find_entry
from onnx_mlir_py.errors import CompileError

PREFIX = "__om_kernel"
LOOPS = ("scf.forall", "scf.for")
_TAG = "onnx_mlir_py.kernel"
# operand-less ops cloned into a kernel instead of passed (not tensors: a
# tensor constant is a weight, passed)
_CLONED = ("arith.constant", "ub.poison")
# the kernels' texts :func:`_merge` printed, for :func:`printed_kernels`:
# module -> {name: text} (weak: the entry goes with its module)
_PRINTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# view ops cloned into a loop with the slice it reads (their result is a
# view of their first operand)
_VIEWS = ("tensor.extract_slice", "tensor.expand_shape", "tensor.collapse_shape", "tensor.cast")

def _outline_script(stem: int) -> str:
    """The outlining of the tagged loops into functions ``<PREFIX><stem>_*``."""
    return f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %loops = transform.structured.match attributes{{{_TAG}}} in %root
      : (!transform.any_op) -> !transform.any_op
    %f, %c = transform.loop.outline %loops {{func_name = "{PREFIX}{stem}_"}}
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }}
}}
"""


def _destinations(loop: ir.Operation) -> list[ir.Value]:
    view = loop.opview
    return list(view.outputs) if loop.name == "scf.forall" else list(view.initArgs)


def inserted(results, views=_VIEWS[1:]) -> bool:
    """Whether one of ``results`` is (a view of it, through ``views``)
    inserted into a larger tensor: inline, ``eliminate-empty-tensors`` makes
    the loop write there directly (a Concat's part); through a call it would
    be a copy."""
    work = list(results)
    while work:
        v = work.pop()
        for use in v.uses:
            user = use.owner
            user = user.operation if hasattr(user, "operation") else user
            if user.name == "tensor.insert_slice" and use.operand_number == 0:
                return True
            if user.name in views:
                work.extend(user.results)
    return False


def _top_ancestor(op: ir.Operation, top_block_parent: ir.Operation,
                  memo: dict | None = None) -> ir.Operation | None:
    """The ancestor of ``op`` (or ``op``) whose parent is the entry function.
    ``memo`` (parent op -> its answer, kept by the caller): the users of one
    constant in one loop nest mostly share their parent, whose climb to the
    function is then taken once (a 50,000-node chain's loops: issue #29)."""
    p = op.parent
    if p is None:
        return None
    if p == top_block_parent:
        return op
    if memo is not None and p in memo:
        return memo[p]
    top = _top_ancestor(p, top_block_parent)
    if memo is not None:
        memo[p] = top
    return top


def _slices_into_loops(fn: ir.Operation, block: ir.Block, marked: set) -> None:
    """Clone each top-level view chain that yields a slice into the marked
    loops that only read it, at the start of the loop's body."""
    for op in list(block.operations):
        op = op.operation
        if op.name not in _VIEWS or not is_slice(op.results[0]):
            continue
        v = op.results[0]
        for use in list(v.uses):
            user = use.owner
            user = user.operation if hasattr(user, "operation") else user
            loop = _top_ancestor(user, fn)
            if loop is None or loop not in marked or loop == user:
                continue            # not in a kernel, or the loop's own operand (a destination)
            body = loop.regions[0].blocks[0]
            clone = _clone_chain(v, ir.InsertionPoint.at_block_begin(body), {})
            user.operands[use.operand_number] = clone


def _constants_per_loop(fn: ir.Operation, block: ir.Block, marked: set) -> None:
    """Give each marked loop its own copy of the entry's scalar, vector and
    index constants (canonicalization hoisted one of each to the top, used by
    every loop). The outlining replaces a captured value's uses inside the
    loop by walking all its uses: a constant shared by every loop made that
    quadratic (a 10,000-op chain, 834 loops: 3.6 s); a copy per loop, placed
    in front of it, has only that loop's uses."""
    memo: dict = {}
    for op in list(block.operations):
        op = op.operation
        if op.name not in _CLONED or len(op.operands) or len(op.results) != 1 \
                or isinstance(op.results[0].type, ir.RankedTensorType):
            continue
        copies: dict = {}
        for use in list(op.results[0].uses):
            user = use.owner
            user = user.operation if hasattr(user, "operation") else user
            loop = _top_ancestor(user, fn, memo)
            if loop is None or loop not in marked:
                continue
            if loop not in copies:
                copies[loop] = op.clone(ir.InsertionPoint(loop)).results[0]
            user.operands[use.operand_number] = copies[loop]


def _clone_chain(v: ir.Value, ip: ir.InsertionPoint, done: dict) -> ir.Value:
    """``v``'s view ops cloned at ``ip`` back to the first value that is not
    a view (kept as it is: the loop captures that one whole)."""
    d = defining_op(v)
    if d is None or d.name not in _VIEWS:
        return v
    if d not in done:
        src = _clone_chain(d.operands[0], ip, done)
        clone = d.clone(ip)
        clone.operands[0] = src
        done[d] = clone
    return done[d].results[ir.OpResult(v).result_number]


def _clone_constant_args(fn: ir.Operation, call: ir.Operation) -> None:
    """In the outlined ``fn``, uses of arguments that the ``call`` passes an
    operand-less scalar or vector constant for use a clone of it instead."""
    entry = fn.regions[0].blocks[0]
    ip = ir.InsertionPoint.at_block_begin(entry)
    for arg, v in zip(entry.arguments, call.operands):
        d = defining_op(v)
        if d is not None and d.name in _CLONED and not len(d.operands) \
                and not isinstance(v.type, ir.RankedTensorType) and len(list(arg.uses)):
            arg.replace_all_uses_with(d.clone(ip).results[0])


def _drop_unused_args(fn: ir.Operation, call: ir.Operation) -> ir.Operation:
    """Remove ``fn``'s unused arguments (the constants cloned in, the
    outlining's own index constants) and ``call``'s operands for them;
    returns the new call. A kernel in another part of the split module
    (codegen/split.py) is an external function there: its unused vector
    arguments were built and passed at every call (a 2,000-op chain's
    entry: 0.9 MB of code, 8 s of llc)."""
    entry = fn.regions[0].blocks[0]
    keep = [i for i, a in enumerate(entry.arguments) if len(list(a.uses))]
    if len(keep) == len(entry.arguments):
        return call
    for i in reversed(range(len(entry.arguments))):
        if i not in keep:
            entry.erase_argument(i)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in entry.arguments], list(ftype.results)))
    operands = list(call.operands)
    with ir.InsertionPoint(call), call.location:
        new = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr(call.attributes["callee"]),
                          [operands[i] for i in keep])
    for r, n in zip(call.results, new.results):
        r.replace_all_uses_with(n)
    call.erase()
    return new.operation


def _is_wrapper(op: ir.Operation) -> bool:
    """An ``scf.execute_region`` the outlining made: a call of a kernel."""
    if op.name != "scf.execute_region":
        return False
    first = list(op.regions[0].blocks[0].operations)[0].operation
    return first.name == "func.call" and ir.FlatSymbolRefAttr(
        first.attributes["callee"]).value.startswith(PREFIX)


def _unwrap(region_op: ir.Operation) -> ir.Operation:
    """The ``scf.execute_region`` the outlining left around a call: the call
    moved before it, its results used instead; returns the call."""
    inner = region_op.regions[0].blocks[0]
    call = list(inner.operations)[0].operation
    call.move_before(region_op)
    for r, c in zip(region_op.results, call.results):
        r.replace_all_uses_with(c)
    region_op.erase()
    return call


def _merge(funcs: dict, calls: list[ir.Operation], printed: dict[str, str]) -> int:
    """Merge the outlined functions (``funcs``: name -> ``func.func``) that
    print the same; returns how many were dropped. ``printed`` receives the
    text of each kept function it printed (name -> text)."""
    kept: dict[str, str] = {}
    dropped = 0
    shared = shared_types(funcs.values())
    for call in calls:
        name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        fn = funcs.get(name)
        if fn is None:          # already merged away: the call was retargeted
            continue
        if str(fn.attributes["function_type"]) not in shared:
            continue            # no other function of its type
        full = fn.get_asm(large_elements_limit=None, use_local_scope=True,
                          assume_verified=True)
        keep = kept.setdefault(full.replace(f"@{name}(", "@_(", 1), name)
        if keep != name:
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(keep)
            fn.erase()
            del funcs[name]
            dropped += 1
        else:
            printed[name] = full
    return dropped


def printed_kernels(module: ir.Module) -> dict[str, str]:
    """The texts of ``module``'s kernels that :func:`outline_kernels` printed
    to merge them (name -> ``get_asm(large_elements_limit=None,
    use_local_scope=True, assume_verified=True)``; a kernel without a copy
    of its type is not there), for the tensor-level keys
    (:func:`.kernel_stubs.stub_kernels`) so that no kernel is printed twice.
    Taken once: valid only until the module changes, i.e. right after the
    outlining (empty for another module or a second call)."""
    return _PRINTED.pop(module, {})


def outline_kernels(module: ir.Module, entry: str) -> tuple[int, int]:
    """Outline the entry's kernels and merge the copies (see the module
    docstring); returns (kernels outlined, copies dropped)."""
    with module.context:
        fn = find_entry(module, entry)
        block = fn.regions[0].blocks[0]
        loops = [op.operation for op in block.operations if op.operation.name in LOOPS]
        marked = [loop for loop in loops
                  if not any(is_slice(v) for v in _destinations(loop)) and not inserted(loop.results)]
        if not marked:
            return 0, 0
        for loop in marked:
            loop.attributes[_TAG] = ir.UnitAttr.get()
        _slices_into_loops(fn, block, set(marked))
        _constants_per_loop(fn, block, set(marked))
        # a stem no function has yet: the -O3 stage outlines its kernels,
        # codegen what is left (the outlining's own renaming collided)
        taken = [ir.StringAttr(op.operation.attributes["sym_name"]).value
                 for op in module.body.operations if "sym_name" in op.operation.attributes]
        n = 0
        while any(t.startswith(f"{PREFIX}{n}_") for t in taken):
            n += 1
        script = ir.Module.parse(_outline_script(n))
        try:
            interpreter.apply_named_sequence(module.operation, script.body.operations[0], script)
        except (ir.MLIRError, ValueError) as e:
            raise CompileError(f"outlining the kernels failed: {e}") from None
        wrappers = [op.operation for op in block.operations if _is_wrapper(op.operation)]
        calls = [_unwrap(w) for w in wrappers]
        funcs = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                 for op in module.body.operations if op.operation.name == "func.func"}
        private = ir.StringAttr.get("private")
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for n, call in enumerate(calls):
            kfn = funcs[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            kfn.attributes["sym_visibility"] = private
            kfn.attributes["llvm.linkage"] = internal
            _clone_constant_args(kfn, call)
            calls[n] = _drop_unused_args(kfn, call)
            loop = list(kfn.regions[0].blocks[0].operations)
            for op in loop:
                if _TAG in op.operation.attributes:
                    del op.operation.attributes[_TAG]
        printed: dict[str, str] = {}
        dropped = _merge(funcs, calls, printed)
        _PRINTED[module] = printed
        return len(calls), dropped
