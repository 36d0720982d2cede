"""The compile pipeline: one list of stages, each emit level a stop point.

    import (importer/)                              -> EmitONNXBasic
    expand-functions (passes/expand_functions.py: ops without a lowering
                      -> their ONNX function bodies; only when lowering)
    to ONNX IR (passes/pipeline.py: verify, shape-inference, canonicalize)
                                                    -> EmitONNXIR
    lower: optimize-onnx (-O2, -O3), profile-nodes (--profile),
           lower-to-linalg (passes/onnx_to_linalg)  -> EmitMLIR
    optimize tensors (-O3 only: passes/optimize)
    profile-resolve (--profile: passes/instrument.py)
    codegen/: LLVM dialect, translate, opt          -> EmitLLVMIR
              llc                                   -> EmitObj
              link                                  -> EmitLib

:func:`run_pipeline` runs it for the CLI and for :func:`compile` (the
Python face of ``onnx-mlir-py model.onnx --EmitLib``). Options are
validated once, when the :class:`~onnx_mlir_py.options.Options` is built;
one :class:`~onnx_mlir_py.timings.Timings` collects the time of every stage.
"""
from __future__ import annotations

import os
import sys
from dataclasses import replace

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError, NeedsInputShapesError
from onnx_mlir_py.options import DEFAULT_OPT_LEVEL, EMIT_LEVELS, Options  # noqa: F401 (re-exported)
from onnx_mlir_py.timings import Timings
from onnx_mlir_py.native_walk import worth_building

# onnx-mlir's naming: emit level -> suffix added to the output base name.
SUFFIX = {"EmitONNX": ".onnx", "EmitONNXBasic": ".onnx.mlir", "EmitONNXIR": ".onnx.mlir",
          "EmitMLIR": ".onnx.mlir", "EmitLLVMIR": ".ll", "EmitObj": ".o", "EmitLib": ".so"}
# the emit levels that stop before lowering (a TF input's sweep skips the lowering check)
ONNX_LEVELS = ("EmitONNX", "EmitONNXBasic", "EmitONNXIR")


def print_module(module: ir.Module, stream, elide: bool = True) -> None:
    """Printed IR elides large constants; written files keep them, so they
    can be read back (as onnx-mlir's .onnx.mlir files can)."""
    module.operation.print(file=stream, large_elements_limit=16 if elide else None,
                           large_resource_limit=64 if elide else None)


def import_onnx(model, opts: Options, timings: Timings) -> ir.Module:
    """Path or ModelProto -> ONNX dialect (ops defined by ONNX functions kept)."""
    from onnx_mlir_py.importer import import_model
    with timings.phase("import"):
        return import_model(model, shape_information=opts.shape_information)


def lower(module: ir.Module, opts: Options, timings: Timings) -> None:
    """ONNX IR -> tensor-level upstream MLIR (linalg/tensor/arith/math), in place.
    ``opts.runtime_checks=False`` (UNSAFE) leaves out the run-time checks of
    the generated code (index ranges, dims that must agree, allocation sizes)."""
    from onnx_mlir_py.passes.pipeline import run_passes
    if not opts.runtime_checks:
        from onnx_mlir_py.check_abi import NO_CHECKS_ATTR
        with module.context:
            module.operation.attributes[NO_CHECKS_ATTR] = ir.UnitAttr.get()
    if opts.opt_level == 3 and o3_threads():
        # lowerings may emit parallel loops (bidirectional RNNs' directions)
        from onnx_mlir_py.check_abi import THREADS_ATTR
        with module.context:
            module.operation.attributes[THREADS_ATTR] = ir.UnitAttr.get()
    if opts.opt_level == 3 and _int8_kernels(opts):
        # QDQ groups become QLinear ops for the int8 kernels (optimize_onnx/quantize.py)
        from onnx_mlir_py.passes.optimize_onnx.quantize import INT8_ATTR
        with module.context:
            module.operation.attributes[INT8_ATTR] = ir.UnitAttr.get()
    if opts.opt_level == 3 and opts.precision == "bf16" and _amx_bf16(opts):
        # bf16 convs run channels-last (optimize_onnx/channels_last.py)
        from onnx_mlir_py.passes.optimize_onnx.channels_last import AMX_BF16_ATTR
        with module.context:
            module.operation.attributes[AMX_BF16_ATTR] = ir.UnitAttr.get()
    from onnx_mlir_py.passes.onnx_to_linalg.bf16 import mark
    mark(module, opts.precision)        # --precision bf16: the contractions' inputs
    rewrites = ["optimize-onnx"] if opts.opt_level >= 2 else []    # ONNX graph rewrites
    profile = ["profile-nodes"] if opts.profile else []             # per-node time hooks
    run_passes(module, ["sequence-to-tensors"] + rewrites + profile +
               ["lower-to-linalg", "verify-mlir"], timings)


def _int8_kernels(opts: Options) -> bool:
    """Whether the -O3 target has the int8 kernels (AVX-512 VNNI:
    passes/optimize/matmul_q8.py, conv_q8.py)."""
    from onnx_mlir_py.isa import fat_levels
    if fat_levels(opts.march):
        return False
    t = resolve_target(opts).target
    return t is not None and t.vnni and t.vector_width == 16


def _amx_bf16(opts: Options) -> bool:
    """Whether the -O3 target has AMX-BF16 (the AMX bf16 conv kernel takes
    channels-last convs: passes/optimize/matmul_bf16_amx.py)."""
    from onnx_mlir_py.isa import fat_levels
    if fat_levels(opts.march):
        return False
    t = resolve_target(opts).target
    return t is not None and t.amx_bf16


def o3_threads() -> bool:
    """-O3 builds multi-threaded code unless ONNX_MLIR_PY_O3_THREADS=0."""
    return os.environ.get("ONNX_MLIR_PY_O3_THREADS", "1") != "0"


def optimize_tensors(module: ir.Module, opts: Options, timings: Timings, on_plan=None) -> None:
    """-O3: the tensor pipeline of ``passes/optimize`` (packing, tiling,
    vectorization, multi-threaded kernels), in place, for the target that
    :func:`resolve_target` chose (``opts.target``). ``ONNX_MLIR_PY_O3_THREADS=0``
    at compile time builds single-threaded code (else the thread count is
    chosen at run time). ``on_plan(plan)`` sees the kernel plan
    (``passes/optimize/kernel_plan.py``)."""
    from onnx_mlir_py.passes.optimize.stage_cache import cached_optimize
    from onnx_mlir_py.target import options_target
    phase = "optimize (tensor -O3)"
    with timings.phase(phase):
        cached_optimize(module, options_target(opts), threads=o3_threads(), on_plan=on_plan,
                        timings=timings, phase=phase,
                        cacheable=opts.precision == "fp32")


def used_features(module: ir.Module, opts: Options) -> Options:
    """``opts`` with the CPU features the -O3 kernels used beyond the
    target CPU's (the module attribute ``om.cpu_features``, e.g. the int8
    VNNI matmul's ``avx512vnni``) in ``Target.features``: llc may then emit
    them and the library requires them at load time."""
    from onnx_mlir_py.isa import required_features
    from onnx_mlir_py.passes.optimize.matmul_q8 import FEATURES_ATTR
    attrs = module.operation.attributes
    if FEATURES_ATTR not in attrs or opts.target is None:
        return opts
    have = set(required_features(opts.target.cpu, opts.target.arch))
    extra = tuple(f for f in (ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[FEATURES_ATTR]))
                  if f not in have and f not in opts.target.features)
    del attrs[FEATURES_ATTR]
    if not extra:
        return opts
    return replace(opts, target=replace(opts.target, features=opts.target.features + extra))


def resolve_target(opts: Options) -> Options:
    """``opts`` with its :class:`~onnx_mlir_py.target.Target` (``opts.target``),
    resolved once from ``mcpu`` / ``march`` / the build machine by
    :func:`onnx_mlir_py.target.resolve`: at -O3 without a choice the build
    machine's highest ISA level (``x86-64-v4`` with AVX-512, ``x86-64-v3``
    with AVX2 + FMA), so the kernels use its vector width and register count;
    below -O3 the codegen default ``x86-64-v2``. The library refuses to run
    on a CPU without the level's features (see ``onnx_mlir_py/isa.py``). A
    ``march`` naming several levels (ISA variants) gets a Target per level
    in :func:`_variants_library`."""
    from onnx_mlir_py.isa import fat_levels
    from onnx_mlir_py.target import resolve
    if fat_levels(opts.march):
        return opts
    return replace(opts, target=resolve(opts.mcpu, opts.march, host_default=opts.opt_level == 3))


def check_precision(opts: Options) -> None:
    """``--precision bf16`` needs a target with AVX512-BF16 or AMX-BF16 (at
    every level the build machine's by default, as -O3 resolves it): else
    one CompileError line, before any work."""
    if opts.precision == "fp32" or opts.emit in ONNX_LEVELS:
        return
    from onnx_mlir_py.isa import fat_levels
    from onnx_mlir_py.passes.onnx_to_linalg.bf16 import check_target
    from onnx_mlir_py.target import resolve
    levels = fat_levels(opts.march)
    targets = [resolve(lv, None) for lv in levels] if levels else \
        [resolve(opts.mcpu, opts.march, host_default=True)]
    check_target(targets, opts.precision)


def source_model(model, opts: Options, timings: Timings, tf=None):
    """A TensorFlow model (SavedModel folder, .pb, .keras/.h5, .tflite) ->
    its ONNX ModelProto (``frontends/tensorflow``, options ``tf``: a
    ``TfOptions``); an ONNX model is returned as it is."""
    from onnx_mlir_py.frontends.tensorflow.detect import tf_format
    if tf_format(model) is None:
        given = [o for o in ("signature", "inputs", "outputs") if getattr(tf, o, None)]
        if given:
            raise CompileError(f"--{'/--'.join(given)}: for TensorFlow inputs only, "
                               f"not for an ONNX model")
        if opts.emit == "EmitONNX" and isinstance(model, (str, os.PathLike)):
            raise CompileError(f"--EmitONNX writes the ONNX model converted from a TensorFlow "
                               f"input; '{model}' is not a TensorFlow model")
        return model
    from onnx_mlir_py.frontends.tensorflow import load
    return load(model, tf, lowering=opts.emit not in ONNX_LEVELS, timings=timings)


def run_pipeline(model, opts: Options, output: str | None, *, print_ir: bool = False,
                 timings: Timings | None = None, on_import=None, tf=None,
                 on_target=None, on_plan=None) -> str | None:
    """Run the stages up to ``opts.emit`` and write ``output`` (or, with
    ``print_ir``, print the textual levels to stdout). Returns the path written.
    ``on_import(module)`` sees the module as imported (``--onnx-op-stats``);
    ``on_target(target)`` each resolved :class:`~onnx_mlir_py.target.Target`
    (one per level of a library with ISA variants; ``-v``), ``on_plan(plan)``
    each -O3 kernel plan (``--print-kernel-plan``, ``-v``).
    A TensorFlow model is converted first (:func:`source_model`, options ``tf``).
    For a library, the C runtime's objects a new cache lacks start compiling
    first, on the other core (:func:`~onnx_mlir_py.codegen.link.runtime_prefetch`)."""
    from contextlib import nullcontext

    from onnx_mlir_py.gc_pause import fewer_collections
    from onnx_mlir_py.native_walk import building
    timings = Timings() if timings is None else timings
    # fewer cyclic collections (gc_pause.py); the IR walks by op names in C
    # once their library is there (native_walk.py; the ONNX-level emits walk
    # little: not for them)
    walks = building() if opts.emit not in ONNX_LEVELS else nullcontext()
    with fewer_collections(), walks:
        if opts.emit != "EmitLib":
            return _run_stages(model, opts, output, print_ir, timings, on_import, tf,
                               on_target, on_plan)
        from onnx_mlir_py.codegen.link import runtime_prefetch
        with runtime_prefetch(opts) as prefetched:
            return _run_stages(model, opts, output, print_ir, timings, on_import, tf,
                               on_target, on_plan, prefetched)


def _run_stages(model, opts: Options, output: str | None, print_ir: bool, timings: Timings,
                on_import, tf, on_target, on_plan, prefetched=None) -> str | None:
    check_precision(opts)
    model = source_model(model, opts, timings, tf)
    if opts.emit == "EmitONNX":
        return _write_onnx(model, output, print_ir)
    module = import_onnx(model, opts, timings)
    worth_building(module)          # the C walk's build, for a model worth it (native_walk.py)
    if on_import is not None:
        on_import(module)
    if opts.emit == "EmitONNXBasic":
        return _write_text(module, output, print_ir)
    from onnx_mlir_py.passes.pipeline import run_passes, to_onnx_ir
    if opts.emit != "EmitONNXIR":       # to be lowered: the ONNX-level emits keep the ops
        run_passes(module, ["expand-functions"], timings)
    to_onnx_ir(module, timings)
    if opts.emit == "EmitONNXIR":
        return _write_text(module, output, print_ir)
    lower(module, opts, timings)
    if opts.emit == "EmitMLIR":
        if opts.profile:
            run_passes(module, ["profile-resolve"], timings)
        return _write_text(module, output, print_ir)
    opts = resolve_target(opts)
    from onnx_mlir_py.isa import fat_levels
    if fat_levels(opts.march):
        return _variants_library(module, opts, output, timings, on_target, on_plan,
                                 print_ir=print_ir)
    if on_target is not None:
        on_target(opts.target)
    if opts.opt_level == 3:
        optimize_tensors(module, opts, timings, on_plan)
        opts = used_features(module, opts)
    elif opts.opt_level == 2:     # a huge function: fused, outlined groups (#29)
        from onnx_mlir_py.passes.optimize.fuse_elementwise import fuse_huge_functions
        with timings.phase("fuse elementwise (huge functions)"):
            fuse_huge_functions(module)
    if opts.profile:          # the code each node kept after the kernels -> events
        run_passes(module, ["profile-resolve"], timings)
    if print_ir and opts.emit in ("EmitObj", "EmitLib"):
        # as onnx-mlir: --printIR prints the final MLIR (here: before codegen) instead
        # of writing the object or library
        return _write_text(module, None, True)
    from onnx_mlir_py import codegen
    if opts.emit == "EmitLLVMIR":
        text = codegen.to_llvm_ir(module, opts, timings).decode()
        if print_ir:
            sys.stdout.write(text)
            return None
        with open(output, "w") as f:
            f.write(text)
        return output
    if opts.emit == "EmitObj":
        return codegen.to_object(module, output, opts, timings)
    return codegen.to_library(module, output, opts, timings, prefetched=prefetched)


def _variants_library(module: ir.Module, opts: Options, output: str, timings: Timings,
                      on_target=None, on_plan=None, print_ir: bool = False) -> str | None:
    """``march="x86-64-v3+x86-64-v4"``: the -O3 stages once per level, each
    on its own copy of the lowered module (cloning shares the constants),
    then one library with a variant per level (codegen/fat.py)."""
    from onnx_mlir_py.codegen.fat import to_fat_library
    from onnx_mlir_py.codegen.llvm import clone_module
    from onnx_mlir_py.isa import fat_levels
    levels = fat_levels(opts.march)
    variants = []
    for i, level in enumerate(levels):
        copy = module if i == len(levels) - 1 else clone_module(module)
        level_opts = resolve_target(replace(opts, mcpu=level, march=None))
        if on_target is not None:
            on_target(level_opts.target)
        if opts.opt_level == 3:
            optimize_tensors(copy, level_opts, timings, on_plan)
        variants.append((level, copy))
    if print_ir:        # each variant's final MLIR, no library (as run_pipeline)
        for level, copy in variants:
            print(f"// --march {level}", flush=True)
            _write_text(copy, None, True)
        return None
    return to_fat_library(variants, output, opts, timings)


def _write_text(module: ir.Module, out: str | None, print_ir: bool) -> str | None:
    if print_ir:
        print_module(module, sys.stdout)
        return None
    with open(out, "w") as f:
        print_module(module, f, elide=False)
    return out


def _write_onnx(model, out: str | None, print_ir: bool) -> str | None:
    import onnx
    if print_ir:
        print(onnx.printer.to_text(model))
        return None
    onnx.save(model, out)
    return out


def default_output(model_path: str, emit: str = "EmitLib", base: str | None = None) -> str:
    from onnx_mlir_py.frontends.tensorflow.detect import output_base, tf_format
    if base is None and tf_format(model_path) is not None:
        base = output_base(model_path)
    if base is None:
        base = model_path[:-5] if model_path.endswith(".onnx") else model_path
    return base + SUFFIX[emit]


def compile(model, output: str | os.PathLike | None = None, *, opt_level: int = DEFAULT_OPT_LEVEL,
            emit: str = "EmitLib", shape_information: dict | str | None = None,
            mcpu: str | None = None, march: str | None = None,
            timings: Timings | None = None, runtime_checks: bool = True,
            profile: bool = False, signature: str | None = None, inputs=None, outputs=None,
            verbose: bool = False, precision: str = "fp32") -> str:
    """Compile an ONNX model (path or ``onnx.ModelProto``) and return the path
    of what was written (``model.so`` by default, next to the model file).
    A TensorFlow model is accepted too (a SavedModel folder, ``.pb``,
    ``.keras``/``.h5``, ``.tflite``; the ``[tf]`` extra): ``signature`` (a
    SavedModel's, default ``serving_default``), ``inputs``/``outputs`` (a frozen
    GraphDef's tensors, ``"x:0[-1,4]"``), ``verbose`` (TensorFlow's logs);
    ``emit="EmitONNX"`` writes the converted ``.onnx``.

    ``shape_information``: ``{input_index: [dims]}`` (a dim ``-1`` = dynamic; index
    ``-1`` = every input) or the CLI's string form ``"0:1x3x224x224"``. A
    ModelProto needs ``output``.
    ``march``: ``"x86-64-v3"`` (portable: any AVX2 + FMA machine),
    ``"x86-64-v4"`` (AVX-512), ``"native"``, ``"x86-64-v3+x86-64-v4"`` (one
    library with both, the best one the CPU has chosen at load time; see
    ``codegen/fat.py``), or an architecture/triple to cross-compile for; the
    -O3 default is the build machine's ISA level.
    ``timings``: a :class:`~onnx_mlir_py.timings.Timings` that receives the
    seconds spent in each stage. ``runtime_checks=False``: UNSAFE, see
    :class:`~onnx_mlir_py.options.Options`. ``profile=True``: the library
    records the time of every node (``ExecutionSession.end_profiling``).
    ``precision="bf16"``: the f32 Conv / MatMul / Gemm compute with bf16
    inputs and f32 accumulation (needs AVX512-BF16 or AMX-BF16).
    """
    opts = Options(emit=emit, opt_level=opt_level, mcpu=mcpu, march=march,
                   shape_information=shape_information, runtime_checks=runtime_checks,
                   profile=profile, precision=precision)
    if timings is not None and not isinstance(timings, Timings):
        raise CompileError(f"compile(): 'timings' must be an onnx_mlir_py.timings.Timings, "
                           f"got {type(timings).__name__}")
    if output is None:
        if not isinstance(model, (str, os.PathLike)):
            raise CompileError("compile(): 'output' is required when the model is not a path")
        output = default_output(os.fspath(model), emit)
    src = os.fspath(model) if isinstance(model, os.PathLike) else model
    from onnx_mlir_py.frontends.tensorflow import TfOptions
    tf = TfOptions(signature=signature, inputs=inputs, outputs=outputs, verbose=verbose)
    try:
        return run_pipeline(src, opts, os.fspath(output), timings=timings, tf=tf)
    except NeedsInputShapesError as e:      # says how to pass the shapes
        from onnx_mlir_py.inference.shape_specialise import with_hint
        raise with_hint(e, src, cli=False) from None
