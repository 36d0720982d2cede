"""Tensor-level module -> LLVM dialect, with upstream passes only.

The input is what the compiler's tensor stages leave (lower-to-linalg and,
at -O3, passes/optimize). Stages (each a textual pipeline run through
``mlir.passmanager``):

1. :func:`.bufferize.bufferize` (returned-memref ABI, see there), in
   its two halves (the kernel cache's summaries between them);
2. optional externalisation of large constants (:mod:`.weights`);
3. loops and cf (:data:`PRE_LLVM_PIPELINE`), the i1 memory-access workaround
   (:mod:`.bool_memory`), then LLVM lowering (:data:`LOWER_PIPELINE`) with
   ``llvm.emit_c_interface`` on the entry so the C wrapper can call
   ``_mlir_ciface_main_graph``.
"""
from __future__ import annotations

from contextlib import nullcontext

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.codegen.alloc_sites import ALLOC_SITE_OPS, mark_alloc_sites
from onnx_mlir_py.codegen.bool_memory import BOOL_MEMORY_OPS, rewrite_bool_memory_accesses
from onnx_mlir_py.codegen.bufferize import bufferize_prepared, prepare_module
from onnx_mlir_py.codegen.strided_copy import strided_copies_to_linalg
from onnx_mlir_py.codegen.dedupe import merge_identical_functions
from onnx_mlir_py.codegen.entry_optnone import entry_without_optimisations
from onnx_mlir_py.codegen.kernel_functions import outline_kernels
from onnx_mlir_py.codegen.outline_loops import PREFIX as LOOP_PREFIX, outline_serial_loops
from onnx_mlir_py.codegen.parallel_for import PREFIX as PFOR_PREFIX
from onnx_mlir_py.codegen.parallel_for import lower_parallel_calls, outline_parallel_loops
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.codegen.signature import ENTRY_NAME, extract_signature, find_entry
from onnx_mlir_py.codegen.weights import WeightStore, externalize_weights
from onnx_mlir_py.ir_util import walk_ops

# Passes that work inside one function are nested under func.func / llvm.func:
# the MLIR pass manager then runs them on the functions in parallel (the
# context's thread pool). After codegen/kernel_functions.py and parallel_for
# a module is the entry plus a function per kernel and loop body, so this
# uses every core (ResNet-50, Zen 4, 2 cores, loaded: the LLVM dialect
# lowering 2.7 -> 1.3-1.5 s wall, same CPU); the LLVM IR is byte-identical.
# What must see the whole module (math-to-libm and memref-to-llvm declare
# functions, cf- and func-to-llvm) stays at the top level.
TO_LOOPS_PIPELINE = "func.func(convert-linalg-to-loops, canonicalize)"

# Up to memref.load/store + cf (then i1 accesses are rewritten, see bool_memory).
PRE_LLVM_PIPELINE = "func.func(" + ", ".join([
    # full unroll: n-D transfers become 1-D vector loads/stores (no stack
    # temporaries, which would grow the stack inside loops)
    "convert-vector-to-scf{full-unroll=true}",
    # memref-expand first, so one expand-strided-metadata + lower-affine
    # covers what it makes too (it ran twice: 0.12 s CPU of ResNet-50)
    "memref-expand",
    "expand-strided-metadata",
    "lower-affine",
    "convert-scf-to-cf",
    # bf16 arithmetic in f32, rounded to bf16 after each op (the conversions
    # in integer ops: x86 has no bf16 instructions below AVX512-BF16, and
    # LLVM's fptrunc to bfloat calls __truncsfbf2, which libgcc 12 lacks)
    "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
    "math-extend-to-supported-types{extra-types=f16 target-type=f32}",
    "arith-expand{include-bf16=true}",
]) + ")"

# Multi-threading (-O3): the scf.forall loops of the tensor-level schedules
# become calls of the library's parallel-for (codegen/parallel_for.py,
# runtime/c/om_parallel.c; thread count settable at run time).

LOWER_PIPELINE = ", ".join([
    "func.func(convert-math-to-llvm)",
    "convert-math-to-libm",
    # x86vector: the bf16 kernels' vdpbf16ps (passes/optimize/matmul_bf16.py,
    # only made for a target with AVX512-BF16); amx: the AMX kernels' tile
    # ops (passes/optimize/amx_tiles.py); they add no other pattern
    "func.func(convert-vector-to-llvm{enable-x86vector=true enable-amx=true})",
    # allocations call the C runtime's _mlir_memref_to_llvm_alloc, which
    # fails the call (NULL, OM_ERROR_ALLOC) when malloc fails, naming the
    # node (alloc_sites)
    "finalize-memref-to-llvm{use-generic-functions=true}",
    "func.func(convert-arith-to-llvm, convert-index-to-llvm)",
    "convert-cf-to-llvm",
    "convert-func-to-llvm",
    "llvm.func(convert-ub-to-llvm, reconcile-unrealized-casts, canonicalize)",
])


def clone_module(module: ir.Module, ops=None) -> ir.Module:
    """A copy of ``module`` in the same context (attributes are shared, so
    large constants are not duplicated); ``ops``: only these of its
    top-level ops (its attributes all the same)."""
    with module.context, ir.Location.unknown():
        new = ir.Module.create()
        attrs = module.operation.attributes
        for i in range(len(attrs)):
            new.operation.attributes[attrs[i].name] = attrs[i].attr
        ip = ir.InsertionPoint(new.body)
        for op in (module.body.operations if ops is None else ops):
            op.operation.clone(ip)
    return new


def finish_bufferization(mod: ir.Module) -> None:
    """After the one-shot bufferization: what the kernels' memref-level
    text still needs before it is keyed (the kernel cache)."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import lower_dpbusd_calls
    lower_dpbusd_calls(mod)     # the int8 kernels' VNNI steps (passes/optimize/matmul_q8.py)
    strided_copies_to_linalg(mod)


def lower_to_llvm_dialect(mod: ir.Module, step, entry: str | None = ENTRY_NAME,
                          alloc_seed: tuple[str, ...] = ()) -> None:
    """The bufferized ``mod`` to the LLVM dialect, in place: loops, the
    parallel and serial loops outlined and merged, cf, LLVM. ``step(name)``:
    a context manager timing each stage. ``entry`` None: a module of
    kernels only (:mod:`.kernel_ahead`: no C interface, no allocation
    sites, as its kernels allocate nothing)."""
    with step("linalg to loops"):
        run_pipeline(mod, TO_LOOPS_PIPELINE, "linalg-to-loops")
    with step("outline and merge kernels"):
        outline_parallel_loops(mod)
        outline_serial_loops(mod)
        merge_identical_functions(mod, PFOR_PREFIX)   # each kernel compiled once (#29)
        merge_identical_functions(mod, LOOP_PREFIX)
    if entry is not None:
        _request_c_interface(mod, entry)
    with step("loops to cf"):
        run_pipeline(mod, PRE_LLVM_PIPELINE, "lowering to loops and cf")
        # one walk for both (each op visited is a Python call); the alloc
        # sites' ops listed before the rewrite erases the i1 accesses
        found = walk_ops(mod, BOOL_MEMORY_OPS + ALLOC_SITE_OPS)
        sites = [op for op in found if op.name in ALLOC_SITE_OPS]
        rewrite_bool_memory_accesses(mod, found)
        if entry is not None:
            mark_alloc_sites(mod, alloc_seed, sites)
    with step("LLVM dialect"):
        run_pipeline(mod, LOWER_PIPELINE, "LLVM dialect lowering")
        lower_parallel_calls(mod)
        if entry is not None:
            entry_without_optimisations(mod, entry)     # a straight line of calls (see there)


def _request_c_interface(module: ir.Module, entry: str) -> None:
    with module.context:
        find_entry(module, entry).attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def emit_mlir_llvm(module: ir.Module, *, entry: str = ENTRY_NAME,
                   weights: WeightStore | None = None,
                   in_place: bool = False, alloc_seed: tuple[str, ...] = (),
                   timings=None, phase: str = "codegen: mlir",
                   kernel_keys=None) -> ir.Module:
    """Lower a tensor-level ``module`` to the LLVM dialect and return it.

    ``module`` is validated first (:func:`extract_signature`) and, unless
    ``in_place``, left untouched (a clone is lowered). ``weights``: a
    :class:`WeightStore` that receives the large constants (the returned
    module then only declares them); None keeps every constant inline.
    ``alloc_seed``: an allocation-site table to extend (see ``mark_alloc_sites``).
    ``timings``: each stage's seconds as steps of ``phase`` (``-v``).
    ``kernel_keys``: a :class:`.kernel_cache.Early`: its ``stub`` called
    before bufferization (tensor-level hits), its ``summarize`` once
    bufferization prepared the module (the misses' summaries), itself with
    the bufferized module (the kernel cache's hits declared there).
    """
    if not isinstance(module, ir.Module):
        raise CompileError(f"expected an mlir.ir.Module, got {type(module).__name__}")
    extract_signature(module, entry)           # validates before any pass runs
    with module.context:
        if not module.operation.verify():
            raise CompileError("the input module does not verify")
    from onnx_mlir_py.passes.check_sizes import check_sizes

    def step(name):
        return nullcontext() if timings is None else timings.step(phase, name)

    with module.context:
        check_sizes(module)     # MLIR asserts on strides that overflow int64
    mod = module if in_place else clone_module(module)
    with step("kernel functions"):
        outline_kernels(mod, entry)     # each kernel bufferized and lowered once (#29)
    if kernel_keys is not None:
        with step("kernel cache stubs"):
            kernel_keys.stub(mod)       # hits bufferized as stubs (kernel_stubs.py)
        with step("kernel cache misses ahead"):
            kernel_keys.ahead(mod)      # misses compiled meanwhile (kernel_ahead.py)
    with step("bufferize"):
        prepare_module(mod, entry)
    if kernel_keys is not None:
        with step("kernel cache summaries"):
            kernel_keys.summarize(mod)  # the misses' (kernel_stubs.py), of their prepared bodies
    with step("bufferize"):
        bufferize_prepared(mod, entry)
        finish_bufferization(mod)
    if weights is not None:
        with step("externalize weights"):
            externalize_weights(mod, weights)
    if kernel_keys is not None:
        with step("kernel cache keys"):
            kernel_keys(mod)
    lower_to_llvm_dialect(mod, step, entry, alloc_seed)
    return mod
