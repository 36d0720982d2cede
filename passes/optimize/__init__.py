"""The -O3 tensor-level pipeline: the compiler's ``optimize tensors`` stage
(``compiler.optimize_tensors``), run on lower-to-linalg's output before
codegen bufferizes it.

    resolve dims        tensor.dim of a linalg result -> of its init (frees fusion)
    kernel plan         each conv / depthwise / pool / matmul / attention op -> its kernel,
                        tile and threads (kernel_plan.py); the steps below apply it
    attention           om.attention calls (onnx_to_linalg/attention.py) -> tiled vector kernel
    depthwise           depthwise_conv_2d_nchw_chw (+ its pad, bias, ReLU/Clip) -> vector row kernel
                        (a QDQ model's: 8-bit in and out, its DQ / requantization fused; depthwise_q8.py)
    pools               pooling_nchw_max / _sum (+ pad, fill, epilogue) -> the same row kernel
    dynamic pools       the same pools with dynamic H/W -> per-image vector rows (pool_dyn.py)
    direct convs        conv_2d_nchw_fchw over <= 4 channels (stems) -> direct register-tiled kernel
    conv_to_matmul      conv_2d_nchw_fchw / grouped conv -> im2col + (batch_)matmul
                        (few pixels: outᵀ = colᵀ @ Wᵀ, conv_pixel_rows.py); the
                        elementwise ops after it become the kernel's epilogue (epilogue.py)
    conv_dyn            conv_2d_nchw_fchw with dynamic H/W -> im2col + packed contraction
    int8 convs          i32 conv of an 8-bit input and constant s8 filters -> 8-bit
                        im2col + int8 matmul (conv_q8.py; AVX-512 VNNI targets)
    int8 amx matmuls    the same matmuls (and the im2col convs') on AMX-INT8 targets
                        -> AMX tile kernel (matmul_q8_amx.py)
    int8 matmuls        i32 matmul of 8-bit A (minus a zero point) and constant s8 B
                        -> VNNI kernel (matmul_q8.py; AVX-512 VNNI targets)
    nbits decode        MatMulNBits' matmul at M <= 8 (a dynamic M: when 1 at run time)
                        -> 2/4/8-bit weights unpacked in registers, per-block sums
                        (matmul_nbits.py)
    pack_matmuls        matmul / batch_matmul -> linalg.pack + packed contraction + unpack
    fold relayouts      packs/transposes/reshapes of constants evaluated at compile time
    kernel schedule     packed contraction: tile to registers, vectorize, hoist, FMAs
                        (an epilogue generic tiled alike, the contraction fused into it)
    pack lowering       remaining packs/unpacks -> pad/reshape/transpose (bufferizable)
    fuse elementwise    chains of elementwise generics -> one generic (fuse_elementwise.py)
    approximate math    f32 exp/erf/tanh/log -> vectorizable polynomials (math_approx.py)
    elementwise         parallel generics: tile + vectorize (masked tails), big ones threaded

Steps with nothing to do are not run: one walk first takes the module's op
kinds (:func:`census`), and a step none of whose ops (or of the ops an
earlier step that ran may create) is there is skipped; a kernel step also
when the kernel plan gave none of its kernels an op. An
elementwise model then runs only canonicalize, fuse, approximate math,
vectorize and the cleanups (each kernel step walked the whole module for
nothing: issue #29, a 50,000-node chain).

Compile time (#29): the kernel steps inline their private functions with
upstream's inliner without its default canonicalize pipeline
(``inline{default-pipeline=}``; each canonicalized the whole module), and
no canonicalize runs between lowering the packs and the elementwise
fusion, whose own pipeline ends with canonicalize and CSE: the same IR
(ResNet-50, YOLO, MobileNetV3, BERT, a QDQ ResNet-50 and a dynamic-batch
ResNet-50: byte-identical LLVM IR), ResNet-50's -O3 stage ~0.3 s CPU less.
The canonicalizations run without region simplification, the last two
for one round of the pattern driver (see :data:`CANONICALIZE`).

Each step is also a named pass for ``python -m onnx_mlir_py.opt`` (see
:data:`PASSES`), with a lit test in ``test/lit/optimize/``.

Target: the :class:`~onnx_mlir_py.target.Target` ``compiler.resolve_target``
resolved (by default the build machine's ISA level: ``x86-64-v4`` with
AVX-512, ``x86-64-v3`` with AVX2); the register tile follows the vector
width (``Target.matmul_tile``: 8x32 on AVX-512, 6x16 on AVX2).

Threads (on at -O3; ``ONNX_MLIR_PY_O3_THREADS=0`` at compile time turns them
off): the kernels' first outer block loop (of kernels with at least
2^21 multiply-adds), large im2col copies, depthwise convs and pools (from
2^17 multiply-adds; these thresholds are in kernel_plan.py) and elementwise ops (from 2^16 units of work) become
``scf.forall`` loops; codegen outlines each into a
call of the library's ``om_parallel_for`` (``codegen/parallel_for.py``,
``runtime/c/om_parallel.c``), whose thread count is set at run time:
``ExecutionSession(num_threads=)`` or ``ONNX_MLIR_PY_NUM_THREADS`` (default 1:
loops run inline in the caller, so a default run uses one core like the
single-threaded build).
"""
from __future__ import annotations

import itertools
from contextlib import nullcontext
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.distinct_loops import distinct_loops
from mlir.passmanager import PassManager

from onnx_mlir_py.passes.optimize.attention import attention_kernels
from onnx_mlir_py.passes.optimize.matmul import pack_matmuls, tile_packed_contractions
from onnx_mlir_py.passes.optimize.matmul_q8 import int8_matmuls
from onnx_mlir_py.passes.optimize.matmul_q8_amx import int8_amx_matmuls
from onnx_mlir_py.passes.optimize.transposes import vectorize_transposes
from onnx_mlir_py.passes.optimize.matmul_bf16 import bf16_matmuls
from onnx_mlir_py.passes.optimize.conv_bf16 import bf16_convs
from onnx_mlir_py.passes.optimize.matmul_nbits import nbits_decodes
from onnx_mlir_py.passes.optimize.conv_q8 import int8_convs
from onnx_mlir_py.passes.optimize.packs import FOLDABLE, PACK_LOWERING, fold_constant_relayouts
from onnx_mlir_py.passes.optimize.conv import convs_to_matmul
from onnx_mlir_py.passes.optimize.conv_direct import direct_convs
from onnx_mlir_py.passes.optimize.conv_dyn import dynamic_convs_to_matmul
from onnx_mlir_py.passes.optimize.depthwise import depthwise_convs
from onnx_mlir_py.passes.optimize.depthwise_q8 import depthwise_q8_convs
from onnx_mlir_py.passes.optimize.pool import pools
from onnx_mlir_py.passes.optimize.pool_dyn import dynamic_pools
from onnx_mlir_py.passes.optimize.elementwise import vectorize_elementwise
from onnx_mlir_py.passes.optimize.fuse_elementwise import fuse_elementwise
from onnx_mlir_py.passes.optimize.math_approx import approximate_math
from onnx_mlir_py.passes.optimize.reductions import reassociate_reductions
from onnx_mlir_py.passes.optimize.register_transposes import rewrite_register_transposes
from onnx_mlir_py.passes.optimize.schedule import apply_to_funcs
from onnx_mlir_py.passes.optimize.kernel_plan import FAMILIES, KernelPlan, plan_kernels
from onnx_mlir_py.passes.optimize.kernel_plan import clear as clear_plan
from onnx_mlir_py.target import Target, target_for


# The -O3 canonicalizations (#29) run without the greedy driver's region
# simplification (unreachable blocks, region DCE, block merging over every
# region after each round; the structured single-block IR here leaves it
# nothing the patterns' own dead-op erasure does not do), and the last
# one (after the vector cleanup) and fuse_elementwise's for one round of
# the driver: its worklist already re-visits the ops each rewrite touched,
# and the second full round only confirmed the fixed point. The same IR
# (ResNet-50, YOLO, MobileNetV3, a QDQ ResNet-50, a 2-layer BERT: byte-
# identical LLVM IR; BERT-base: the same -O3 output;
# test_o3_canonicalize_rounds.py); the first canonicalize (after the packs'
# folds) needs its second round (without it that IR changes). Never wrong
# either way: a canonicalization only simplifies.
CANONICALIZE = "canonicalize{region-simplify=disabled}"
CANONICALIZE_ONCE = "canonicalize{region-simplify=disabled max-iterations=1}"
# the bf16 kernels of the plan: the matmul step's, then the conv step's
BF16_KERNELS = ("packed_matmul_bf16", "amx_matmul_bf16", "conv_bf16", "amx_conv_bf16")


def _canonicalize(module: ir.Module, once: bool = False, per_function: bool = False) -> None:
    """Canonicalize and CSE the module (``once``: one pattern round, see
    :data:`CANONICALIZE_ONCE`). ``per_function``: nested under ``func.func``,
    so that the context's threads share the functions (the same IR: a
    function is isolated from above, the module holds only functions); for
    a module of many kernel functions (after ``outline_kernel_functions``:
    ResNet-50's last canonicalize 75 -> 33 ms on 2 threads). Before it, one
    entry holds nearly everything and the nesting only costs (67 -> 88 ms)."""
    canon = CANONICALIZE_ONCE if once else CANONICALIZE
    pipeline = f"func.func({canon}, cse)" if per_function else f"{canon}, cse"
    with distinct_loops(module):        # CSE linear in the loops (distinct_loops.py)
        PassManager.parse(f"builtin.module({pipeline})", module.context).run(module.operation)


def resolve_dims(module: ir.Module) -> int:
    """``tensor.dim`` of a linalg op's result -> the same dim of its init
    (destination) operand, which has the result's shape and is defined
    before the op. The lowering reads dynamic sizes off each op's result for
    its allocation check; those reads were second users that kept a kernel
    from fusing its neighbours (the 1x1 conv's ReLU6 into the depthwise conv
    after it, MobileNet with a dynamic batch; a conv's ReLU into the dynamic
    H/W conv's copy out). Returns how many dims were moved.

    Not upstream's ``resolve-ranked-shaped-type-result-dims``: it also
    resolves reshapes and pads into size arithmetic, after which
    ``linalg-fuse-elementwise-ops`` moved a grouped conv's ``expand_shape``
    of a padded tensor above the pad, before a size it uses (invalid IR;
    fuzz s4201-15/16, ``test_o3_dynamic.py``)."""
    moved = 0
    for op in walk_ops(module.operation, "tensor.dim"):
        src = op.operands[0]
        while True:     # through chains of inits (a conv's init is a fill's result)
            owner = src.owner
            if not isinstance(owner, ir.OpView) or not owner.name.startswith("linalg.") \
                    or not hasattr(owner, "outputs"):
                break
            results, outs = list(owner.results), list(owner.outputs)
            if len(results) != len(outs) or src not in results:
                break
            init = outs[results.index(src)]
            if init.type != src.type:
                break
            src = init
        if src != op.operands[0]:
            op.operands[0] = src
            moved += 1
    return moved


# linalg ops that are no contraction (``linalg-block-pack-matmul`` packs the
# named matmuls and any contraction-like generic)
_NOT_CONTRACTIONS = frozenset({"linalg.generic", "linalg.yield", "linalg.index", "linalg.fill",
                               "linalg.broadcast", "linalg.transpose", "linalg.copy",
                               "linalg.map"})


@dataclass(frozen=True)
class Census:
    """The op kinds of a module, from one walk: ``names`` the op names,
    ``contractions`` whether any op may be a contraction (a linalg op not
    in _NOT_CONTRACTIONS, or a generic with a non-parallel iterator)."""
    names: frozenset
    contractions: bool


def census(module: ir.Module) -> Census:
    """The module's :class:`Census` (one walk; no Python object per op it
    does not look at twice)."""
    names: set[str] = set()
    contraction = [False]

    def visit(op):
        name = op.name
        names.add(name)
        if not contraction[0] and name.startswith("linalg."):
            if name not in _NOT_CONTRACTIONS or (
                    name == "linalg.generic" and
                    "reduction" in str(op.attributes["iterator_types"])):
                contraction[0] = True
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return Census(frozenset(names), contraction[0])


def outline_kernel_functions(module: ir.Module) -> None:
    """The kernels' loop nests as functions, the copies merged
    (:func:`onnx_mlir_py.codegen.kernel_functions.outline_kernels`), before
    the steps that run over every function (elementwise fusion, the math
    approximation, the vector cleanups, canonicalize): they then run once
    per distinct kernel (#29; codegen outlines what the steps after this one
    leave in the entry)."""
    from onnx_mlir_py.codegen.kernel_functions import outline_kernels, printed_kernels
    from onnx_mlir_py.codegen.signature import ENTRY_NAME, entry_or_none
    fn = entry_or_none(module)
    if fn is not None and len(fn.regions[0].blocks):     # (the lit tests' modules have none)
        outline_kernels(module, ENTRY_NAME)
        printed_kernels(module)     # (the texts are of these bodies, the steps change them)


def lower_packs(module: ir.Module) -> None:
    apply_to_funcs(module, PACK_LOWERING)


# Masks, multi-reductions and broadcasts lowered, one pattern set at a time
# (mixing them with cast_away_vector_leading_one_dim / transfer permutation
# patterns loops forever on masked broadcast reads, like canonicalization
# mixed with the shape_cast/transpose lowerings does).
VECTOR_CLEANUP = """
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_masked_transfers
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_broadcast
    } : !transform.any_op
    transform.apply_patterns to %func {
      transform.apply_patterns.vector.lower_transpose lowering_strategy = "shuffle_16x16"
    } : !transform.any_op
"""


def cleanup_vectors(module: ir.Module) -> None:
    rewrite_register_transposes(module)     # before lower_transpose (register_transposes.py)
    apply_to_funcs(module, VECTOR_CLEANUP, on_loops=True)   # linear and ~2x cheaper (see there)


def optimize(module: ir.Module, target: Target | None = None, *, threads: bool = False,
             on_plan=None, timings=None, phase: str = "optimize (tensor -O3)") -> KernelPlan:
    """The whole -O3 tensor pipeline, in place. The kernel plan
    (:mod:`.kernel_plan`) is made first; each kernel step then rewrites the
    ops the plan gave it (so their order below is no priority). Returns the
    plan (``on_plan(plan)`` sees it once the kernel steps ran, before the
    steps after them).
    ``timings`` (:class:`onnx_mlir_py.timings.Timings`): each step's seconds
    under ``phase`` (what ``-v`` prints indented). A kernel that grows past
    its budget (:mod:`.kernel_budget`) puts the module back as it came and
    plans again with its node on the generic path (one warning per node)."""
    from onnx_mlir_py.passes.optimize.kernel_budget import KernelTooLarge, fallback, restore
    from onnx_mlir_py.passes.optimize.value_reads import active
    target = target or target_for("native")
    saved = module.operation.clone()        # the stage's input: a few thousand ops
    excluded: dict[str, str] = {}           # node -> why it is on the generic path
    planned: dict = {}                      # node -> its plan entry (this round's)
    try:
        for rounds in itertools.count(1):
            try:
                return _optimize(module, target, threads, on_plan, timings, phase, excluded,
                                 planned)
            except KernelTooLarge as e:
                fallback(e, planned, excluded, rounds)
                rec = active()                  # the stage cache's recorder
                if rec is not None:
                    rec.refuse("a kernel over its budget: the stage ran again")
                with module.context:
                    restore(module, saved)
    finally:
        saved.erase()


def _optimize(module: ir.Module, target: Target, threads: bool, on_plan, timings, phase: str,
              excluded: dict[str, str], planned: dict) -> KernelPlan:
    """One run of :func:`optimize`'s steps (``excluded``: nodes the plan
    leaves to the generic path, with why; ``planned`` gets the plan's
    entries by node)."""
    m = module

    def step(name):
        return nullcontext() if timings is None else timings.step(phase, name)

    with module.context, ir.Location.unknown():
        kinds = census(m)
        with step("kernel plan"):
            if "tensor.dim" in kinds.names:
                resolve_dims(m)
            plan = plan_kernels(m, target, threads, excluded) if kinds.names & set(FAMILIES) \
                else KernelPlan(target, threads, [])
            planned.clear()
            planned.update((e.node, e) for e in plan.entries)
        # what a step may act on (see census); a step whose ops the module
        # has none of is not run (each would walk the whole module for nothing)
        kernels = bool(plan.entries)       # each kernel step rewrites only the ops planned for it
        # a kernel step (its kernels' names below) runs when the plan gave
        # one of them an op (each walked the whole module for nothing)
        used = {e.kernel for e in plan.entries}
        matmuls = kernels or kinds.contractions
        packs = matmuls or bool(kinds.names & {"linalg.pack", "linalg.unpack"})
        relayouts = matmuls or bool(kinds.names & set(FOLDABLE))
        # vector.reduction: from vectorized reductions (contractions) and kernels only
        reductions = matmuls or any(n.startswith("vector.") for n in kinds.names)
        steps = [
            ("attention", ("attention",), lambda: attention_kernels(m, target, threads, plan)),
            ("depthwise int8", ("depthwise_q8",), lambda: depthwise_q8_convs(m, target, threads, plan)),
            ("depthwise", ("depthwise_rows",), lambda: depthwise_convs(m, target, threads, plan)),
            ("pools", ("pool_rows", "pool_q8"), lambda: pools(m, target, threads, plan)),
            ("dynamic pools", ("pool_dyn", "depthwise_dyn"), lambda: dynamic_pools(m, target, threads, plan)),
            ("direct convs", ("conv_direct",), lambda: direct_convs(m, target, threads, plan)),
            ("convs to matmul", ("conv_im2col",), lambda: convs_to_matmul(
                m, threads, (target.matmul_tile[2], target.matmul_tile[1]),
                row_block=target.matmul_tile[0], plan=plan)),
            ("dynamic convs", ("conv_dyn",), lambda: dynamic_convs_to_matmul(m, target, threads, plan)),
            ("int8 convs", ("int8_im2col",), lambda: int8_convs(m, target, threads, plan)),
            ("int8 amx matmuls", ("int8_amx", "int8_im2col"), lambda: int8_amx_matmuls(m, target, threads, plan)),
            ("int8 matmuls", ("int8_vnni", "int8_im2col"), lambda: int8_matmuls(m, target, threads, plan)),
            # (a bf16 conv may leave its matmul to the matmul step)
            ("bf16 matmuls", BF16_KERNELS, lambda: bf16_matmuls(m, target, threads, plan)),
            ("bf16 convs", BF16_KERNELS[2:], lambda: bf16_convs(m, target, threads, plan)),
            ("nbits decode", ("nbits_decode",), lambda: nbits_decodes(m, target, threads, plan)),
            ("clear plan", kernels, lambda: clear_plan(m)),
            # also the conv kernels' matmuls
            ("pack matmuls", matmuls, lambda: pack_matmuls(m, target)),
            ("fold relayouts", relayouts, lambda: fold_constant_relayouts(m)),
            ("canonicalize", True, lambda: _canonicalize(m)),
            ("tile packed contractions", matmuls, lambda: tile_packed_contractions(m, threads)),
            ("lower packs", packs, lambda: lower_packs(m)),
            ("fold relayouts", True, lambda: fold_constant_relayouts(m)),
            ("kernel functions", kernels, lambda: outline_kernel_functions(m)),
            # (no canonicalize here: fuse elementwise's pipeline ends with one)
            ("fuse elementwise", True, lambda: fuse_elementwise(m, CANONICALIZE_ONCE)),
            ("approximate math", True, lambda: approximate_math(m)),
            ("vectorize elementwise", True, lambda: vectorize_elementwise(m, target, threads)),
            ("vectorize transposes", True, lambda: vectorize_transposes(m, target, threads)),
            ("cleanup vectors", True, lambda: cleanup_vectors(m)),
            ("reassociate reductions", reductions, lambda: reassociate_reductions(m)),
            ("canonicalize", True, lambda: _canonicalize(m, once=True, per_function=True)),
        ]
        for name, needed, run in steps:
            if name == "clear plan" and on_plan is not None:
                on_plan(plan)       # the kernels built: the plan a budget left as it is
            if needed if isinstance(needed, bool) else not used.isdisjoint(needed):
                with step(name):
                    run()
    return plan


# The -O3 steps as named passes (passes/pipeline.py, ``python -m onnx_mlir_py.opt``),
# with options ``--o3-depthwise=target=x86-64-v4,threads=1``: ``target`` an
# ``llc -mcpu`` name (onnx_mlir_py.target.target_for; default LIT_TARGET, so
# the lit tests' CHECK lines do not depend on the machine), ``threads`` 0/1.
LIT_TARGET = "x86-64-v4"


def _step(fn, *, target: bool = True, threads: bool = True, **extra):
    """A pass ``module, **options -> None`` running ``fn(module, target, threads)``
    (``fn(module, threads)`` without ``target``); ``extra``: option name ->
    (keyword of ``fn``, parser)."""
    keys = (["target"] if target else []) + (["threads"] if threads else []) + list(extra)

    def run(module: ir.Module, **options) -> None:
        bad = [k for k in options if k not in keys]
        if bad:
            from onnx_mlir_py.errors import CompileError
            raise CompileError(f"pass option {bad[0]!r}: this pass takes "
                               f"{', '.join(keys) or 'no options'}")
        kw = {extra[k][0]: extra[k][1](options[k]) for k in extra if k in options}
        on = options.get("threads", "0") not in ("0", "false")
        args = ([target_for(options.get("target", LIT_TARGET))] if target else []) + \
            ([on] if threads else [])
        fn(module, *args, **kw)
    run.options = tuple(keys)
    return run


def _flag(text: str) -> bool:
    return text not in ("0", "false")


def _convs_to_matmul_pass(m: ir.Module, t: Target, th: bool, blocks: bool = True,
                          pixel_rows: bool = True) -> None:
    """``o3-conv-to-matmul``: the step, then a canonicalize (in the pipeline
    the next step's; the step's inlining no longer canonicalizes, #29), so
    the pass prints the IR its lit tests check."""
    convs_to_matmul(m, th, (t.matmul_tile[2], t.matmul_tile[1]) if blocks else (1, 1),
                    row_block=t.matmul_tile[0] if blocks and pixel_rows else 0)
    PassManager.parse("builtin.module(canonicalize)", m.context).run(m.operation)


def _direct_convs_pass(m: ir.Module, t: Target, th: bool) -> None:
    """``o3-conv-direct``: the step, then a canonicalize (in the pipeline the
    one after the packs; the step's inlining no longer canonicalizes, #29),
    so the pass prints the IR its lit tests check."""
    direct_convs(m, t, th)
    PassManager.parse("builtin.module(canonicalize)", m.context).run(m.operation)


PASSES = {
    "o3-resolve-dims": _step(resolve_dims, target=False, threads=False),
    "o3-attention": _step(attention_kernels),
    "o3-depthwise": _step(depthwise_convs),
    "o3-depthwise-q8": _step(depthwise_q8_convs),
    "o3-pools": _step(pools),
    "o3-pool-dyn": _step(dynamic_pools),
    "o3-conv-direct": _step(_direct_convs_pass),
    # blocks=0: no kernel blocks (plain im2col + matmul); pixel-rows=0: never
    # the pixel-row form (conv_pixel_rows.py)
    "o3-conv-to-matmul": _step(_convs_to_matmul_pass, blocks=("blocks", _flag),
                               **{"pixel-rows": ("pixel_rows", _flag)}),
    "o3-conv-dyn": _step(dynamic_convs_to_matmul),
    "o3-int8-conv": _step(int8_convs),
    "o3-int8-matmul": _step(int8_matmuls),
    "o3-int8-amx-matmul": _step(int8_amx_matmuls),
    "o3-bf16-matmul": _step(bf16_matmuls),
    "o3-bf16-conv": _step(bf16_convs),
    "o3-nbits-decode": _step(nbits_decodes),
    "o3-pack-matmul": _step(pack_matmuls, threads=False),
    "o3-fold-constant-relayouts": _step(fold_constant_relayouts, target=False, threads=False),
    "o3-matmul-kernel": _step(tile_packed_contractions, target=False),
    "o3-lower-packs": _step(lower_packs, target=False, threads=False),
    "o3-fuse-elementwise": _step(fuse_elementwise, target=False, threads=False),
    "o3-approximate-math": _step(approximate_math, target=False, threads=False),
    "o3-vectorize-elementwise": _step(vectorize_elementwise),
    "o3-vectorize-transposes": _step(vectorize_transposes),
    "o3-vector-cleanup": _step(cleanup_vectors, target=False, threads=False),
    "o3-pipeline": _step(lambda m, t, th: optimize(m, t, threads=th)),
}
