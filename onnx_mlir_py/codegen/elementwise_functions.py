"""A huge function's elementwise ``linalg.generic`` ops as calls of one
function per distinct op (issue #29), at the tensor level.

A 50,000-node elementwise chain at -O3 is about 4,200 fused generics
(groups of ~12 nodes), and the vectorization, the vector cleanups, the
outlining of the kernels and their merge (codegen/kernel_functions.py) and
every later stage worked on each of them although the chain has four
different ones. :func:`outline_elementwise` moves each top-level generic of
the entry into a private function ``__om_ew<k>(inputs, destinations) ->
results`` called in its place, one function per distinct op: two generics
share one when they have the same attributes (indexing maps, iterator types, ...), the
same operand and result types and the same body (op names, attributes,
result types and how their operands are wired); one-shot bufferization
analyses the functions with the module (``bufferize-function-boundaries``).

It acts only on a function of more than ``MIN_OPS`` top-level ops (a
normal model's entry has fewer: ResNet-50's has 486 at -O3, BERT-base's
758, so their code is unchanged). At -O3
:func:`passes.optimize.fuse_elementwise` calls it last, on the small fused
bodies (their keys are cheap): ``approximate_math``, the vectorization, the
vector cleanups and the codegen then work once per distinct fused group,
and ``kernel_functions`` finds no loop left in the entry (a 10,000-node
chain, 834 fused groups, 4 distinct: -O3 20.5 -> 15.5 s CPU with the bound
lowered to 0). The functions are marked ``no_inline`` (``approximate_math``'s
``inline`` pass would copy them back into every call) and ``noinline`` for
LLVM (which would copy the loop nest back into every call site). Run time:
one call per kernel, as ``kernel_functions`` made it.

At -O2 the outlining alone (without the fusion) before the chunks of
:mod:`.bufferize_chunks` measured no gain (a 10,000-node chain 24.6 vs
25.0 s CPU, single runs on a loaded machine): :mod:`.dedupe` already
compiles each distinct loop nest once there, and what is left per node
(its allocation, call and free through the LLVM lowering and ``opt`` /
``llc``) is the same. So -O2 runs the fusion first too, in a module with a
function of more than ``MIN_OPS`` ops only
(:func:`passes.optimize.fuse_elementwise.fuse_huge_functions`): ~12x fewer
groups, hence allocations, calls and frees.

The function takes the destinations as arguments and returns them written
(as the kernels of :mod:`.kernel_functions`): the caller's ``tensor.empty``
becomes its own allocation, freed there. A function returning a new buffer
made the deallocation pipeline emit run-time alias checks for every result
in every chunk (tried at -O2: a 10,000-node chain 33 s CPU instead of 22 s).

A generic stays in place when it is not a plain elementwise op of static
shapes whose result is a new buffer:

- an iterator that is not parallel, a destination that is not a static
  ``tensor.empty`` or whose value the body reads (a reduction's init), a
  dynamic shape, a vector or memref operand;
- an input that is a slice (an argument has the identity layout: the slice
  would be copied), a result inserted into a larger tensor (inline,
  ``eliminate-empty-tensors`` makes the generic write there directly);
- a body op with regions, or a body that uses a value from outside other
  than an operand-less scalar constant (those are cloned into the function
  and are part of what makes two generics the same).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import func

from onnx_mlir_py.codegen.buffer_origin import VIEWS, origin
from onnx_mlir_py.codegen.kernel_functions import inserted
from onnx_mlir_py.codegen.parallel_for import defining_op

PREFIX = "__om_ew"
# only a function with more top-level ops than this (a normal model's entry
# has fewer: ResNet-50 486 and BERT-base 758 at -O3 keep their code)
MIN_OPS = 2048


def _operand_type_ok(t: ir.Type) -> bool:
    if isinstance(t, ir.RankedTensorType):
        return t.has_static_shape
    return not isinstance(t, (ir.ShapedType, ir.VectorType))


def _attrs(op: ir.Operation) -> tuple:
    """The op's attributes, hashable: attributes and types are uniqued in
    the context, so they compare (and hash) by identity, without printing."""
    attrs = op.attributes
    return tuple((n, attrs[n]) for n in attrs)


class _Plan:
    """What a generic's function needs: its key, inputs, destinations' empties
    and the outside constants its body uses."""
    __slots__ = ("key", "ins", "empties", "captured")


def _plan(op: ir.Operation) -> _Plan | None:
    view = op.opview
    ins, outs = list(view.inputs), list(view.outputs)
    if not outs or len(op.regions) != 1:
        return None
    its = op.attributes["iterator_types"]
    if any("parallel" not in str(a) for a in ir.ArrayAttr(its)):
        return None
    empties = []
    for v in outs:
        d = defining_op(v)
        if d is None or d.name != "tensor.empty" or len(d.operands) \
                or not _operand_type_ok(v.type):
            return None
        empties.append(d)
    if not all(_operand_type_ok(v.type) for v in ins):
        return None
    body = op.regions[0].blocks[0]
    args = list(body.arguments)
    if any(len(list(a.uses)) for a in args[len(ins):]):
        return None                     # the body reads the destination
    if any(isinstance(v.type, ir.RankedTensorType) and origin(v).sliced for v in ins):
        return None
    if inserted(op.results, VIEWS):
        return None
    arg_index = {a: i for i, a in enumerate(args)}
    result_of: dict = {}
    captured: list = []
    captured_index: dict = {}
    parts = []
    for k, b in enumerate(body.operations):
        b = b.operation
        if len(b.regions):
            return None
        refs = []
        for v in b.operands:
            if v in arg_index:
                refs.append(("a", arg_index[v]))
                continue
            if v in result_of:
                refs.append(("r",) + result_of[v])
                continue
            if v not in captured_index:
                d = defining_op(v)
                if d is None or d.name != "arith.constant" or len(d.operands) \
                        or isinstance(v.type, (ir.ShapedType, ir.VectorType)):
                    return None
                captured_index[v] = len(captured)
                captured.append(d)
            refs.append(("c", captured_index[v]))
        for j, r in enumerate(b.results):
            result_of[r] = (k, j)
        parts.append((b.name, _attrs(b), tuple(refs), tuple(r.type for r in b.results)))
    plan = _Plan()
    plan.key = (_attrs(op), tuple(v.type for v in ins), tuple(v.type for v in outs),
                tuple(_attrs(c) + (c.results[0].type,) for c in captured), tuple(parts))
    plan.ins, plan.empties, plan.captured = ins, empties, captured
    return plan


def _make_function(op: ir.Operation, plan: _Plan, name: str, before: ir.Operation) -> None:
    """``name(inputs..., destinations...) -> results``: the generic writes
    into the destinations it is passed and returns them."""
    operands = list(op.operands)
    with ir.InsertionPoint(before), op.location:
        f = func.FuncOp(name, ir.FunctionType.get([v.type for v in operands],
                                                  [r.type for r in op.results]),
                        visibility="private")
        f.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
        f.attributes["passthrough"] = ir.Attribute.parse('["noinline"]')
        # and for MLIR's inliner (approximate_math's inline pass)
        f.attributes["no_inline"] = ir.UnitAttr.get()
        block = f.add_entry_block()
    ip = ir.InsertionPoint(block)
    consts = {c.results[0]: c.clone(ip).results[0] for c in plan.captured}
    g = op.clone(ip)
    for i, a in enumerate(block.arguments):
        g.operands[i] = a
    if consts:
        for b in g.regions[0].blocks[0].operations:
            b = b.operation
            for k, v in enumerate(b.operands):
                if v in consts:
                    b.operands[k] = consts[v]
    with ip, op.location:
        func.ReturnOp(list(g.results))


def is_huge(fn: ir.Operation, min_ops: int | None = None) -> bool:
    """Whether the function ``fn`` is one block of more than ``min_ops``
    top-level ops (default MIN_OPS); counts no further than that."""
    min_ops = MIN_OPS if min_ops is None else min_ops
    if len(fn.regions[0].blocks) != 1:
        return False
    n = 0
    for _ in fn.regions[0].blocks[0].operations:
        n += 1
        if n > min_ops:
            return True
    return False


def outline_elementwise(fn: ir.Operation, min_ops: int | None = None) -> int:
    """Replace the top-level elementwise generics of the function ``fn`` by
    calls (see the module docstring) when it has more than ``min_ops``
    top-level ops (default MIN_OPS, :func:`is_huge`); returns how many were
    replaced. The functions are inserted in front of ``fn``."""
    if not is_huge(fn, min_ops):
        return 0
    block = fn.regions[0].blocks[0]
    names: dict = {}
    n = 0
    for op in list(block.operations):
        op = op.operation
        if op.name != "linalg.generic":
            continue
        plan = _plan(op)
        if plan is None:
            continue
        name = names.get(plan.key)
        if name is None:
            name = names[plan.key] = f"{PREFIX}{len(names)}"
            _make_function(op, plan, name, fn)
        with ir.InsertionPoint(op), op.location:
            call = func.CallOp([r.type for r in op.results], ir.FlatSymbolRefAttr.get(name),
                               list(op.operands))
        for r, c in zip(op.results, call.results):
            r.replace_all_uses_with(c)
        op.erase()
        n += 1
    return n
