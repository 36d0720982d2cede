"""Tensor -> memref: bufferization of the tensor-level module.

Entry-point ABI ("returned memrefs", works for static and dynamic shapes):
``@main_graph`` takes one identity-layout memref per input and *returns* one
identity-layout memref per output. Inputs are marked
``bufferization.writable = false`` so user buffers are never written; the
ownership-based deallocation pipeline frees every intermediate and hands
the returned buffers to the caller (an input or a constant that is returned
is cloned by that pipeline; the same buffer returned twice is returned twice,
which the C wrapper deduplicates before taking ownership).

:func:`bufferize` takes the module *after* the tensor-level stages of the
compiler (lower-to-linalg and, at -O3, the tiling / vectorisation / packing
of passes/optimize): :func:`..llvm.emit_mlir_llvm` calls it first.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.codegen.bufferize_chunks import outline_chunks
from onnx_mlir_py.codegen.early_free import free_after_last_use
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.codegen.empty_slices import fold_empty_slices
from onnx_mlir_py.codegen.partial_writes import mark_partial_writes
from onnx_mlir_py.codegen.resolve_dims import resolve_dims
from onnx_mlir_py.codegen.signature import ENTRY_NAME, find_entry
from onnx_mlir_py.distinct_loops import distinct_loops
from onnx_mlir_py.ir_util import walk_ops

ONE_SHOT = ("one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
            "function-boundary-type-conversion=identity-layout-map "
            "unknown-type-conversion=identity-layout-map}")

# tensor.dim of ops that reify their result shapes (linalg, pad, reshapes)
# -> those shapes; then resolve_dims for loops and scf.if (see there: with
# dynamic dims the one-shot analysis otherwise dominated compile time). No
# canonicalize first: PRE_BUFFERIZE_PIPELINE's comes after the dims are
# resolved (the same LLVM IR, -O0 and -O3, static and dynamic shapes;
# ResNet-50 ~0.1 s CPU less, #29)
RESOLVE_DIMS_PIPELINE = "func.func(resolve-ranked-shaped-type-result-dims)"

# (per-function passes nested under func.func run on the functions in
# parallel: see codegen/llvm.py's TO_LOOPS_PIPELINE; the result is the same)
PRE_BUFFERIZE_PIPELINE = "func.func(resolve-ranked-shaped-type-result-dims, canonicalize, cse, canonicalize)"

# at the module level: nested under func.func it left a ResNet-50 kernel an
# allocation per parallel-loop iteration (bufferize runs it through
# eliminate_empty_tensors: only on the functions where it can act)
ELIMINATE_EMPTY = "eliminate-empty-tensors"

# the ops that may take a tensor.empty's place (upstream's
# SubsetInsertionOpInterface: the pass only acts where one's source comes
# from a tensor.empty of the same function). A name missing here could
# only cost an elimination (a buffer more), never a wrong result
_INSERTIONS = ("tensor.insert_slice", "tensor.parallel_insert_slice",
               "bufferization.materialize_in_destination", "linalg.copy")

AFTER_ELIMINATION = [
    ONE_SHOT,
    "func.func(canonicalize)",
    # a function's result that is its argument's buffer (the kernels of
    # codegen/kernel_functions.py write their destination in place) is
    # dropped: the deallocation pipeline would otherwise clone it
    "drop-equivalent-buffer-results",
    # upstream's buffer-deallocation-pipeline, its passes that work inside
    # one function nested under func.func (they ran on the whole module, on
    # one core), less two of its canonicalize runs: the one after
    # expand-realloc (the canonicalize above did that work; no reallocs
    # here), and its last one, which ran right before this pipeline's own
    # canonicalize (after convert-bufferization-to-memref). Same LLVM IR
    # (ResNet-50, YOLO, MobileNetV3, GPT-2 decode)
    "func.func(expand-realloc{emit-deallocs=false})",
    "ownership-based-buffer-deallocation",
    "func.func(canonicalize, buffer-deallocation-simplification)",
    "bufferization-lower-deallocations",
    "func.func(cse, convert-bufferization-to-memref, canonicalize, cse)",
]
BUFFERIZE_PIPELINE = ", ".join([ELIMINATE_EMPTY] + AFTER_ELIMINATION)


def eliminate_empty_tensors(module: ir.Module) -> int:
    """``eliminate-empty-tensors`` (ELIMINATE_EMPTY) on the functions of
    ``module`` that hold both a ``tensor.empty`` and one of _INSERTIONS:
    elsewhere it finds nothing to do, but its one-shot analysis of the whole
    module was ~0.15 s of ResNet-50's CPU (52 functions, one of them with
    both). The functions are moved into a module of their own for the pass
    and back to their places: with function boundaries, a function that
    calls none is analysed alone as in the whole module (a caller does not
    change its callee's analysis). If one of them calls a function, the
    pass runs on the whole module. Returns how many functions it ran on
    (-1: the whole module)."""
    names = ("tensor.empty", "func.call") + _INSERTIONS
    need = []
    for f in module.body.operations:
        f = f.operation
        if f.name != "func.func":
            continue
        found = {op.name for op in walk_ops(f, names)}
        if "tensor.empty" in found and not found.isdisjoint(_INSERTIONS):
            if "func.call" in found:
                run_pipeline(module, ELIMINATE_EMPTY, "bufferization")
                return -1
            need.append(f)
    if not need:
        return 0
    top = [op.operation for op in module.body.operations]
    moved = set(need)
    # each function's place: the first op after it that stays (None: the end)
    anchors = []
    for f in need:
        i = top.index(f) + 1
        while i < len(top) and top[i] in moved:
            i += 1
        anchors.append(top[i] if i < len(top) else None)
    with module.context, ir.Location.unknown():
        alone = ir.Module.create()
        for f in need:
            alone.body.append(f)
        try:
            run_pipeline(alone, ELIMINATE_EMPTY, "bufferization", verify=False)
        finally:
            for f, anchor in zip(need, anchors):
                if anchor is None:
                    module.body.append(f)
                else:
                    f.move_before(anchor)
    return len(need)


def mark_inputs_read_only(module: ir.Module, entry: str = ENTRY_NAME) -> None:
    """Add ``bufferization.writable = false`` to every argument of ``@entry``
    (in-place updates then copy instead of clobbering the caller's data)."""
    func = find_entry(module, entry)
    with module.context:
        n = len(func.regions[0].blocks[0].arguments)
        old = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
        new = []
        for i in range(n):
            entries = {}
            if old is not None:
                for na in old[i]:
                    entries[na.name] = na.attr
            entries["bufferization.writable"] = ir.BoolAttr.get(False)
            new.append(ir.DictAttr.get(entries))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


# an empty with more users than this gets a copy per user (split_shared_empties)
SPLIT_MIN_USES = 32


def split_shared_empties(module: ir.Module, min_uses: int = SPLIT_MIN_USES) -> int:
    """Give every use of a ``tensor.empty`` used more than ``min_uses`` times
    its own copy, placed before the user; returns how many copies were made.

    CSE merges the identical ``tensor.empty`` inits of independent ops into
    one value (a chain of 1,000 elementwise ops at -O2: one empty, 1,000
    uses). The one-shot analysis then sees every op write into one alias set
    and checks each write against all the others: 208 s of bufferization for
    that chain (issue #29). An empty has no contents, so a copy per use
    changes nothing but the analysis: each op gets a buffer of its own, or
    writes in place where it could before. Few users cost the analysis
    little, and there the shared value lets it reuse buffers: split at every
    use, ResNet-50's (at most 11 users) ran 1.5-2.5% slower (Zen 4, 1
    thread), so only widely shared empties are split."""
    n = 0
    with module.context:
        for op in walk_ops(module, "tensor.empty"):
            uses = [(u.owner, u.operand_number) for u in op.results[0].uses]
            if len(uses) <= min_uses:
                continue
            for user, i in uses[1:]:
                user = user.operation if hasattr(user, "operation") else user
                clone = op.clone(ir.InsertionPoint(user))
                user.operands[i] = clone.results[0]
                n += 1
    return n


def prepare(module: ir.Module, stage: str = "bufferization") -> None:
    """What every function gets before the one-shot analysis, in place. The
    kernel cache's summaries (codegen/kernel_stubs.py) analyse copies of the
    kernels this prepared (between :func:`prepare_module` and
    :func:`bufferize_prepared`), so a kernel's recorded summary is the one
    its bufferization sees. ``stage``: named in errors."""
    run_pipeline(module, RESOLVE_DIMS_PIPELINE, f"{stage} (dims)")
    resolve_dims(module)
    with distinct_loops(module):        # its CSE: linear in the loops
        run_pipeline(module, PRE_BUFFERIZE_PIPELINE, stage)
    if fold_empty_slices(module):
        run_pipeline(module, "canonicalize", stage)
    split_shared_empties(module)        # after the last CSE (see there)
    # last step before the analysis: canonicalize would fold the marks away
    mark_partial_writes(module)


def bufferize(module: ir.Module, entry: str = ENTRY_NAME) -> ir.Module:
    """Bufferize ``module`` in place (see the module docstring for the ABI)."""
    prepare_module(module, entry)
    return bufferize_prepared(module, entry)


def prepare_module(module: ir.Module, entry: str = ENTRY_NAME) -> None:
    """The first half of :func:`bufferize`: the entry's inputs read-only,
    every function prepared (:func:`prepare`). The kernel cache's summaries
    (codegen/kernel_stubs.py) are taken between the two halves."""
    mark_inputs_read_only(module, entry)
    prepare(module)


def bufferize_prepared(module: ir.Module, entry: str | None = ENTRY_NAME) -> ir.Module:
    """The second half of :func:`bufferize`: the analysis and the rewrite to
    memrefs, then the deallocations. ``entry`` None: a module of kernels
    (codegen/kernel_ahead.py), no entry to cut into chunks."""
    if entry is not None:
        outline_chunks(module, entry)       # a long entry: linear time (see there)
    eliminate_empty_tensors(module)
    run_pipeline(module, ", ".join(AFTER_ELIMINATION), "bufferization")
    free_after_last_use(module.operation)   # not at the end of the model (see there)
    return module
