"""The kernel cache's misses compiled ahead of the model (#29).

LLVM (opt + llc) is most of a cold compile's CPU (ResNet-50: ~2.8 s of
~7.5 s), and on its own it waited for the whole model's MLIR lowering:
the misses were known only once the module was in the LLVM dialect. But
a missed kernel's object is a function of its tensor-level text alone
(the kernel cache's tensor-level key, :mod:`.kernel_stubs`, rests on
that), so right after :func:`.kernel_stubs.stub_kernels` each missed
kernel is cloned into a module of kernels of its own (a *chunk*, in the
model's order), which goes through the same stages the model would have
taken it through:

- :func:`.bufferize.prepare`, the kernels' summaries (upstream's one-shot
  analysis, :func:`.kernel_stubs._summaries`), set on them as at a miss,
  the bufferization (no entry: nothing to cut into chunks), the
  memref-level fixes (:func:`.llvm.finish_bufferization`);
- the memref-level key (:func:`.kernel_cache.key_kernels`' rules: no
  allocation, no symbol, no ``dense_resource``; else the kernel stays in
  the model, a miss as before), the name ``__om_kc_<key[:32]>``;
- the LLVM dialect lowering (:func:`.llvm.lower_to_llvm_dialect`), then
  each kernel with what it reaches as a unit (:func:`.kernel_cache._unit_ir`)
  submitted to the compile's LLVM pool (:class:`.llvm_capi.Pool`), whose
  thread compiles it while this thread goes on with the next chunk and the
  model.

In the model the kernel becomes a stub with its summary, as a hit does
(:func:`.kernel_stubs.resolve_stubs` checks its bufferized type against
the chunk's, then declares the symbol); its object is linked once the pool
wrote it, and stored in the cache with its sidecar (:meth:`.kernel_cache.
Kernels.store`). The model's own bufferization and lowering then skip the
kernels' bodies. The pass pipelines run without the GIL
(:mod:`.mlir_capi`), so the pool's thread is not held up by them.

Each kernel is keyed and compiled on its own (its unit module), so an
object does not depend on which chunk it was lowered in.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

import mlir.ir as ir

# kernels per chunk: the first chunk's object starts compiling after its
# lowering; larger chunks run fewer, larger pass-manager runs. The first
# chunk is smaller, so that LLVM's thread starts sooner (the other core is
# idle until then)
CHUNK = 6
FIRST_CHUNK = 2


@dataclass
class _Pending:
    model_name: str         # the kernel's name in the model
    summary: object         # kernel_stubs.Summary
    key: str                # memref-level
    symbol: str
    ftype: str              # its bufferized function_type
    parallel: bool
    nested: bool            # more than one parallel loop (find_units' ``nested``)


def _functions(module: ir.Module) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "func.func"}


def compile_ahead(module: ir.Module, early) -> None:
    """The tensor-level misses of ``early`` (:class:`.kernel_cache.Early`,
    after :func:`.kernel_stubs.stub_kernels`) compiled ahead, in chunks
    (see the module docstring); each one done becomes a stub in
    ``module``. Nothing without the compile's pool (``early.pool``)."""
    # one job: the pool's threads start at its wait (nothing to overlap)
    if early.pool is None or early.pool.jobs < 2 or not early.allow_stubs or not early.misses:
        return
    with module.context:
        names = [n for n in _functions(module) if n in early.misses]
    done: dict[str, object] = {}        # memref-level symbol -> its Stub
    # the pool's thread has the other core: MLIR's own threads (the
    # context's, jobs >= 2) would only contend with it, and cost a small
    # module more than they save (ResNet-50's chunks, alone: 1.19 s of
    # pass runs without them, 1.35 s with)
    module.context.enable_multithreading(False)
    try:
        i = 0
        while i < len(names):
            n = FIRST_CHUNK if i == 0 else CHUNK
            _chunk(module, names[i:i + n], early, done)
            i += n
    finally:
        module.context.enable_multithreading(True)


def _chunk(module: ir.Module, names: list[str], early, done: dict) -> None:
    from onnx_mlir_py.codegen.bufferize import bufferize_prepared, prepare
    from onnx_mlir_py.codegen.kernel_cache import (_PARALLEL, NAME_PREFIX, _unit_ir,
                                                   find_units, memref_head, memref_key,
                                                   name_units, nested_parallel)
    from onnx_mlir_py.codegen.kernel_stubs import (Stub, Summary, _make_stub, _set_access,
                                                   _summaries, sidecar, strip_access)
    from onnx_mlir_py.codegen.llvm import (clone_module, finish_bufferization,
                                           lower_to_llvm_dialect)
    from onnx_mlir_py.errors import CompileError
    model = _functions(module)
    chunk = clone_module(module, [model[n] for n in names])
    with module.context:
        prepare(chunk)
        fns = _functions(chunk)
        summaries = dict(zip(names, _summaries(chunk, [fns[n] for n in names])))
        for n in names:
            if summaries[n] is None:        # stays in the model, a miss as before
                fns[n].erase()
            else:
                _set_access(fns[n], summaries[n][0])
        if not any(summaries.values()):
            return
        bufferize_prepared(chunk, None)
        finish_bufferization(chunk)
        strip_access(chunk)
        head = memref_head(chunk, early)
        fns = _functions(chunk)
        stubs: dict[str, object] = {}       # model name -> its Stub (loaded or known)
        pending: list[_Pending] = []
        twins: list[tuple[str, str]] = []   # (model name, the symbol of a pending kernel)
        for n in names:
            op = fns.get(n)
            if op is None:
                continue
            keyed = memref_key(head, op, n)
            if keyed is None:
                op.erase()                  # left to the model's own keys
                continue
            key, text = keyed
            symbol = NAME_PREFIX + key[:32]
            ftype = str(ir.TypeAttr(op.attributes["function_type"]).value)
            s = Summary(early.misses[n], *summaries[n])
            parallel = bool(_PARALLEL.search(text))
            early.sidecars[key] = sidecar(s, key, ftype, parallel)
            if symbol in done:              # the same kernel once bufferized
                stubs[n] = done[symbol]
                op.erase()
                continue
            if any(p.symbol == symbol for p in pending):
                # the same memref-level kernel earlier in this chunk (two
                # kernel functions the -O3 stage left apart, or whose
                # tensor-level texts differ, can bufferize to one text): one
                # definition of the symbol, this one shares its Stub
                twins.append((n, symbol))
                op.erase()
                continue
            data = early.cache.load(key)
            if data is not None:            # a memref-level hit
                stubs[n] = done[symbol] = Stub(s.key, key, symbol, ftype, data, parallel, True)
                op.erase()
                continue
            op.attributes["sym_name"] = ir.StringAttr.get(symbol)
            pending.append(_Pending(n, s, key, symbol, ftype, parallel, nested_parallel(text)))
        if pending:
            lower_to_llvm_dialect(chunk, lambda _: nullcontext(), entry=None)
            keyed = {p.symbol: p.key for p in pending}
            units, _, defined, declared = find_units(chunk, keyed, {
                p.symbol for p in pending if p.nested})
            name_units(units, early.target, keyed)
            for u in units:
                p = next(p for p in pending if p.symbol == u.root)
                obj = early.tmp / f"kernel_a{len(early.ahead_parts)}.o"
                try:
                    src = obj.with_suffix(".bc")
                    src.write_bytes(_unit_ir(u, defined, declared))
                except (ir.MLIRError, CompileError):
                    continue                # stays in the model, a miss as before
                early.pool.submit(src, obj)
                early.ahead_parts.append((p.key, str(src), str(obj)))
                stubs[p.model_name] = done[p.symbol] = Stub(
                    p.summary.key, p.key, p.symbol, p.ftype, None, p.parallel, True)
        for n, symbol in twins:             # stays a miss if its twin's unit failed
            if symbol in done:
                stubs[n] = done[symbol]
        for n, stub in stubs.items():
            _make_stub(model[n], *summaries[n])
            early.stubs[n] = stub
            del early.misses[n]
