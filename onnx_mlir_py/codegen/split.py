"""LLVM codegen over all cores: the model's LLVM IR split into parts that
``opt`` and ``llc`` compile in parallel (issue #29, "parallel, lean codegen").

    model.bc | llvm-split -j PARTS     part0 .. part<PARTS-1> (bitcode; locals
                                       made hidden globals, so parts link)
      opt -O<n> part<i>                at most ``jobs`` at a time, largest first
      llc -O<n> -filetype=obj          the same
      -> part<i>.o                      linked with the rest by codegen/link.py

opt + llc of a part run in this process, on ``jobs`` threads, through LLVM's
C API (:mod:`.llvm_capi`: the same libLLVM, byte-identical objects, no
process start-up or optimised bitcode in between) when it is usable for the
target; otherwise (or ``ONNX_MLIR_PY_LLVM_IN_PROCESS=0``) the tools run.
The parts go to the compile's :class:`.llvm_capi.Pool`, whose threads
already compile the kernel cache's misses (codegen/link.py ``to_objects``).

The model's functions are its entry (``main_graph``, with most kernels
inlined: about half of ResNet-50's code) and one per parallel loop body
(``__om_pfor_*``), so more parts than cores balance the work: the part
holding the entry runs on one core while the others share the rest.
Functions in different parts are not inlined into each other; they never
were (loop bodies are called through ``om_parallel_for``'s pointer).

Below SPLIT_MIN_BYTES of LLVM IR text (a tenth of that in bitcode, which
codegen/link.py translates to in this process: a tenth of the text to write
and for llvm-split to read), or with one core, the module is compiled whole. ``ONNX_MLIR_PY_CODEGEN_JOBS=1`` turns splitting off (and
the MLIR context's threads, see onnx_mlir_py/context.py).
"""
from __future__ import annotations

from pathlib import Path

from onnx_mlir_py.codegen import llvm_capi
from onnx_mlir_py.codegen.tools import run, tool
from onnx_mlir_py.timings import Timings
# split_jobs / JOBS_ENV live with the tool runner: the MLIR context reads
# them too (onnx_mlir_py/context.py), without importing codegen
from onnx_mlir_py.tool_process import JOBS_ENV, run_tools, split_jobs  # noqa: F401

# LLVM IR text below this is compiled whole: splitting costs ~0.1 s
# (llvm-split, a process per part) and pays from about a second of opt + llc:
# a 250-op elementwise chain (its vector math: 3.4 s in opt + llc, whole).
SPLIT_MIN_BYTES = 192 << 10
# Bitcode (what codegen/link.py translates to in this process) is measured
# as this many times smaller: the CNNs' ratio (MNIST 9.3, MobileNetV2 9.6,
# ResNet-50 11). A 250-op elementwise chain's bitcode (142 kB) is larger
# than its text (99 kB): it is now split, at the same CPU and wall time.
TEXT_PER_BITCODE = 10
# parts per core
PARTS_PER_JOB = 4


def compiled_whole(ll: bytes) -> bool:
    """Whether LLVM IR ``ll`` (text or bitcode) is too small to split."""
    if ll[:4] == b"BC\xc0\xde":
        return len(ll) * TEXT_PER_BITCODE < SPLIT_MIN_BYTES
    return len(ll) < SPLIT_MIN_BYTES


def _run_all(commands: list[list[str]], jobs: int, what: str) -> None:
    """:func:`.tool_process.run_tools`, failing as :func:`.tools.run` does."""
    from onnx_mlir_py.codegen.tool_failure import tool_failure
    from onnx_mlir_py.errors import EnvironmentFailure
    try:
        results = run_tools(commands, jobs)
    except OSError as e:           # no memory, no such file: the machine's
        raise EnvironmentFailure(f"cannot run {commands[0][0]}: {e}") from None
    for p in results:
        if p.returncode != 0:
            raise tool_failure(what, p.returncode, p.stderr)


def split_objects(ll: bytes, tmp: Path, jobs: int, opt_level: int, target_args: list[str],
                  timings: Timings, kernels=None, pool=None) -> list[str]:
    """Object files of LLVM IR ``ll`` (not optimised; text or bitcode)
    split in ``jobs * PARTS_PER_JOB`` parts, written in ``tmp`` (the caller
    compiles a module that :func:`compiled_whole` says is small whole).
    ``kernels``: a :class:`.kernel_cache.Kernels` whose misses compile
    with the parts, largest first (in this process: the cache needs it);
    ``pool``: the :class:`.llvm_capi.Pool` they may already compile on."""
    src = tmp / ("model.bc" if ll[:4] == b"BC\xc0\xde" else "model.ll")
    src.write_bytes(ll)
    with timings.phase("codegen: split"):
        n = jobs * PARTS_PER_JOB
        run([tool("llvm-split"), f"-j{n}", "-o", str(tmp / "part"), str(src)], what="llvm-split")
        parts = [tmp / f"part{i}" for i in range(n)]
        # largest first: the longest runs start first
        parts.sort(key=lambda p: -p.stat().st_size)
    objects = [f"{p}.o" for p in parts]
    triple, cpu, features = target_of(target_args)
    if llvm_capi.usable(triple, cpu):
        compile_in_process(parts, objects, jobs, opt_level, triple, cpu, features, timings,
                           kernels, pool)
        return objects
    with timings.phase("codegen: opt"):
        _run_all([[tool("opt"), f"-O{opt_level}", *llvm_capi.LLVM_OPTIONS, *target_args, str(p),
                   "-o", f"{p}.opt.bc"]
                  for p in parts], jobs, f"opt -O{opt_level}")
    with timings.phase("codegen: llc"):
        _run_all([[tool("llc"), f"-O{opt_level}", "-relocation-model=pic", "-filetype=obj",
                   *target_args, f"{p}.opt.bc", "-o", o] for p, o in zip(parts, objects)],
                 jobs, "llc")
    return objects


def compile_in_process(parts: list[Path], objects: list[str], jobs: int, opt_level: int,
                       triple: str, cpu: str, features: str, timings: Timings,
                       kernels=None, pool=None) -> None:
    """opt + llc of each of ``parts`` into ``objects`` and of the kernel
    cache's misses (``kernels``, then stored), in this process on ``jobs``
    threads (llvm_capi.py), largest first: the longest runs start first.
    ``pool``: the :class:`.llvm_capi.Pool` of the compile, whose threads may
    already compile the misses (``kernels.pool``); else one of its own."""
    from contextlib import nullcontext
    with nullcontext(pool) if pool is not None else \
            llvm_capi.Pool(jobs, opt_level, triple, cpu, features) as pool:
        todo = list(zip(parts, objects))
        if kernels is not None and kernels.pool is None:
            todo += list(zip(kernels.parts, kernels.outputs))
        for p, o in todo:
            pool.submit(p, o)
        with timings.phase("codegen: opt + llc"):
            pool.wait()
    if kernels is not None:
        kernels.store()


def target_of(target_args: list[str]) -> tuple[str, str | None, str]:
    """(triple, cpu or None, features) of the tools' ``-mtriple`` / ``-mcpu`` /
    ``-mattr`` arguments (link._target_args)."""
    given = dict(a[1:].split("=", 1) for a in target_args)
    return given.get("mtriple", ""), given.get("mcpu"), given.get("mattr", "")
