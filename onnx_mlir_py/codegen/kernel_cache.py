"""The on-disk kernel cache: -O3 kernels compiled once, their objects
reused by later compiles of any model (issue #29).

After the LLVM dialect lowering, each kernel function (``__om_kernel*``,
:mod:`.kernel_functions`) with every function it reaches (its parallel
loop bodies ``__om_pfor_*`` and their trampolines, its serial loops
``__om_loop_*``) is a *unit*. A unit that references no global (its
weights and activations are arguments) and holds no ``dense_resource``
constant (its bytes are not in the text) is compiled on its own:

- its functions get content-derived names: ``__om_kc_<hash>`` for the
  kernel and ``__om_kc_<hash>_b<i>`` for the functions it reaches, where
  ``<hash>`` hashes the unit's text with its own names replaced by
  placeholders (and the target), so the same kernel in two models prints
  the same;
- key: sha256 of (the unit's LLVM-dialect module text, the triple, CPU,
  features, opt level, the compiler fingerprint of the compile cache,
  which covers the MLIR / LLVM wheels' versions and this compiler's
  sources);
- a hit: the kernel becomes an external declaration in the model's
  module, its functions that nothing else calls are dropped, and the
  cached object (checked, copied into the work folder) is linked;
- a miss: the unit's functions, cloned into a module of their own (the
  kernel external and hidden, the rest internal), are translated to
  bitcode (:func:`_unit_ir`) and compiled by the caller with the model's
  split parts (:func:`.split.compile_in_process`), and the object stored.

Most kernels are keyed earlier, right after bufferization
(:func:`key_kernels`, called by :func:`.llvm.emit_mlir_llvm` through an
:class:`Early`): the memref-level ``func.func`` text with its own name a
placeholder (+ the same target, fingerprint and opt level, and the
module's data layout). What follows (linalg to loops, the parallel-loop
and serial-loop outlining, loops to cf, the LLVM dialect) is this
compiler's deterministic function of that text, so the key is as exact;
the kernel is renamed ``__om_kc_<key[:32]>`` there, and a hit becomes an
external declaration before all of those stages (they are skipped for
it); a miss goes on as a unit above, named and keyed by its memref-level
key. Left to the LLVM-level key: a kernel that references a symbol,
holds a ``dense_resource`` constant (its bytes are not in the text: never
cached) or allocates (``alloc_sites`` gives its allocations the model's node ids),
and every kernel of a module with bufferized chunks.

Earlier still, before bufferization (:mod:`.kernel_stubs`, through
:meth:`Early.stub`): a kernel keyed at the memref level also gets a
tensor-level key, whose entry (a *sidecar* ``<key>.t``) records what the
caller's bufferization needs of it; a hit is bufferized as a stub with
that summary, then declared as a memref-level hit.

Files: ``<dir>/<key[:2]>/<key>.o`` and ``<key>.o.sha256`` (sidecars:
``<key>.t`` and ``<key>.t.sha256``), through the
compile cache's file helpers (``backend/cache_files.py``: private 0700
directories, 0600 files owned by this user, atomic durable writes). An
entry is loaded only when it is a regular file owned by this user and not
writable by others, starts with the ELF magic and matches its recorded
sha256; else it is compiled again with one ``CacheEntryWarning`` (an
object without its record yet is a plain miss: another process is
writing it). A cache that cannot be used (read-only, unsafe, full) is
skipped with one warning: the kernel cache only saves time, it never
fails a compile.

Where: ``ONNX_MLIR_PY_KERNEL_CACHE`` = a directory, or ``0`` (off);
default ``<compile cache>/kernels`` (``backend/cache.py``: ``$ONNX_MLIR_PY_CACHE``
or ``~/.cache/onnx-mlir-py``). Only where the parts compile in this process
(:func:`.llvm_capi.usable`: an x86-64 triple and a named CPU).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import mlir.ir as ir

from onnx_mlir_py.codegen.kernel_functions import PREFIX as KERNEL_PREFIX
from onnx_mlir_py.errors import CacheEntryWarning, CompileError, UnsafeCacheError

ENV = "ONNX_MLIR_PY_KERNEL_CACHE"
NAME_PREFIX = "__om_kc_"
# bump when what a key covers changes meaning
_FORMAT = b"onnx-mlir-py kernel cache 3\0"
# a constant whose bytes are a blob of the module, not in the text: never keyed
_RESOURCE = "dense_resource<"
_SYMBOL = re.compile(r'@(?:"([^"]+)"|([A-Za-z_$.][\w$.\-]*))')


def cache_dir() -> Path | None:
    """The kernel cache's directory, None when turned off (``$ONNX_MLIR_PY_KERNEL_CACHE=0``)."""
    v = os.environ.get(ENV, "")
    if v == "0":
        return None
    if v:
        return Path(v)
    from onnx_mlir_py.backend.cache import cache_dir as compile_cache_dir
    return compile_cache_dir() / "kernels"


@dataclass
class Unit:
    root: str                       # the kernel function's name in the model
    names: list[str]                # root first, then what it reaches (first use order)
    texts: list[str]                # their printed text, names as in the model
    decls: list[str]                # the external functions it calls (printed declarations)
    decl_names: list[str] = field(default_factory=list)     # their names
    name: str = ""                  # the content-derived name of the root
    text: str = ""                  # the unit's module text (content-derived names)
    key: str = ""
    object: Path | None = None
    renamed: dict = field(default_factory=dict)


@dataclass
class Stats:
    """What :func:`cached_kernels` did (``-v``, the tests)."""
    units: int = 0
    hits: int = 0
    misses: int = 0
    skipped: int = 0            # kernels left in the model (they reference a global, or
    #                             their unit could not be made a module of its own)
    early_hits: int = 0         # of the hits, those keyed at the memref level (not lowered)
    tensor_hits: int = 0        # of those, keyed at the tensor level (not bufferized)


LAST = Stats()          # the last compile's, for the tests and benchmarks


def _symbols(text: str) -> list[str]:
    out, seen = [], set()
    for m in _SYMBOL.finditer(text):
        s = m.group(1) or m.group(2)
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def _rename(text: str, names: dict[str, str]) -> str:
    def sub(m):
        s = m.group(1) or m.group(2)
        return "@" + names[s] if s in names else m.group(0)
    return _SYMBOL.sub(sub, text)


def _print(op: ir.Operation) -> str:
    # local scope: without it each print numbers (and aliases) the whole
    # module (ResNet-18's 144 functions: 3.8 s)
    return op.get_asm(large_elements_limit=None, assume_verified=True, use_local_scope=True)


class _Fn:
    """A defined function of the LLVM-dialect module: its text and the
    symbols it references, printed when first asked for (:func:`find_units`)."""
    __slots__ = ("op", "_text", "_symbols")

    def __init__(self, op: ir.Operation):
        self.op, self._text, self._symbols = op, None, None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = _print(self.op)
        return self._text

    @property
    def symbols(self) -> list[str]:
        if self._symbols is None:
            self._symbols = _symbols(self.text)
        return self._symbols


def _is_body(name: str) -> bool:
    """A parallel loop's body (``parallel_for``: not its trampoline ``_t``
    or launcher ``_l``): it calls no function of the module (the serial
    loops are outlined from other functions only), only declarations, but
    the launcher of a nested parallel loop (:func:`_calls_unit`)."""
    from onnx_mlir_py.codegen.parallel_for import PREFIX as PFOR_PREFIX
    return name.startswith(PFOR_PREFIX) and not name.endswith(("_t", "_l"))


def find_units(module: ir.Module, keyed=(), nested=()) -> tuple[list[Unit], int, dict, dict]:
    """The cacheable units of the LLVM-dialect ``module``; also the count of
    kernels that are not (they reference a global), every defined
    function's :class:`_Fn` and the declarations' (op, text).
    ``keyed``: the names of the kernels keyed at the memref level
    (:func:`key_kernels`), roots too. Their units need no text (their key
    is made), so their parallel loops' bodies (most of the module's text)
    are not printed: such a body references no global, no
    ``dense_resource`` (its kernel's memref-level text had none) and no
    defined function (:func:`_is_body`); its unit module gets every
    declaration (:func:`_unit_ir`; unused ones emit nothing). A body that
    did call one would fail that module's translation: the unit then stays
    in the model, as one that cannot stand alone. ``nested``: the keyed
    kernels whose memref-level text has more than one parallel loop (one
    may be inside another: a dynamic batch's loop around a threaded
    kernel's, whose body calls the inner loop's launcher): their bodies are
    printed, so the unit reaches the inner loop's functions and renames the
    body's call (:func:`_calls_unit`)."""

    def is_kernel(n: str) -> bool:
        return n.startswith(KERNEL_PREFIX) or n in keyed
    defined, declared, other = {}, {}, set()
    for op in module.body.operations:
        op = op.operation
        name = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes \
            else None
        if op.name != "llvm.func":
            if name is not None:
                other.add(name)
            continue
        if len(op.regions[0].blocks):
            defined[name] = _Fn(op)
        else:
            declared[name] = (op, None)
    units, skipped = [], 0
    for root in defined:
        if not is_kernel(root):
            continue
        early = root in keyed
        names, decls, todo, ok = [], [], [root], True
        while todo and ok:
            n = todo.pop(0)
            if n in names:
                continue
            names.append(n)
            for s in ([] if early and _is_body(n) and root not in nested
                      else defined[n].symbols):
                if s in defined:
                    if s not in names and s not in todo:
                        todo.append(s)
                elif s in declared:
                    if s not in decls:
                        decls.append(s)
                elif s in other or is_kernel(s) and s != root:
                    ok = False         # a global (or another kernel): stays in the model
        if not ok or any(is_kernel(n) and n != root for n in names) or not early and any(
                _RESOURCE in defined[n].text for n in names):
            skipped += 1
            continue
        if early:
            units.append(Unit(root, names, [], [], list(declared)))
            continue
        for d in decls:
            if declared[d][1] is None:
                declared[d] = (declared[d][0], _print(declared[d][0]))
        units.append(Unit(root, names, [defined[n].text for n in names],
                          [declared[d][1] for d in decls], decls))
    return units, skipped, defined, declared


def name_units(units: list[Unit], target: str, keyed: dict | None = None) -> None:
    """Give each unit its content-derived names, module text and key
    (``target``: triple, CPU, features, opt level and fingerprint).
    ``keyed``: content name -> key of the kernels keyed at the memref level
    (:func:`key_kernels`): named and keyed already, their functions take
    their names."""
    def names(u: Unit, root: str) -> dict[str, str]:
        return {n: f"{root}_b{i}" if i else root for i, n in enumerate(u.names)}
    for u in units:
        if keyed and u.root in keyed:
            u.name, u.key = u.root, keyed[u.root]
            u.renamed = names(u, u.name)
            continue
        h = hashlib.sha256(_FORMAT + target.encode() + b"\0")
        placeholder = names(u, NAME_PREFIX)
        for t in u.decls + [_rename(t, placeholder) for t in u.texts]:
            h.update(t.encode() + b"\0")
        u.name = NAME_PREFIX + h.hexdigest()[:32]
        u.renamed = names(u, u.name)
        u.text = "\n".join(u.decls + [_rename(t, u.renamed) for t in u.texts]) + "\n"
        u.key = hashlib.sha256(_FORMAT + target.encode() + b"\0" + u.text.encode()).hexdigest()


def declare_units(module: ir.Module, units: list[Unit], defined: dict) -> None:
    """In ``module``: each unit's kernel becomes an external declaration of
    its content name (its calls retargeted), and the unit's other functions
    that nothing left in the module references are erased."""
    roots = {u.root for u in units}
    in_unit = {n for u in units for n in u.names}
    callers = {n: f.op for n, f in defined.items()
               if n not in in_unit and any(s in in_unit for s in f.symbols)}
    # what stays reaches (a loop body shared with the entry): kept
    keep, todo = set(), [s for n in callers for s in defined[n].symbols
                         if s in in_unit and s not in roots]
    while todo:
        n = todo.pop()
        if n not in keep:
            keep.add(n)
            todo.extend(s for s in defined[n].symbols if s in defined and s not in roots)
    external = ir.Attribute.parse("#llvm.linkage<external>")
    declared: set[str] = set()
    for u in units:
        op = defined[u.root].op
        if u.name in declared:          # the same kernel twice (merged late): one declaration
            pass
        else:
            declared.add(u.name)
            with ir.InsertionPoint(op), op.location:
                ir.Operation.create("llvm.func", attributes={
                    "sym_name": ir.StringAttr.get(u.name),
                    "function_type": op.attributes["function_type"],
                    "linkage": external}, regions=1)
        for n, c in callers.items():
            if u.root in defined[n].symbols:
                ir.SymbolTable.replace_all_symbol_uses(u.root, u.name, c)
    for n in in_unit:
        if n not in keep:
            defined[n].op.erase()


# -- the entries -----------------------------------------------------------------

class _Store:
    """The cache directory of one compile: entries read and written through
    ``backend/cache_files.py``; the first problem with the directory turns
    it off for the rest of the compile, with one warning."""

    def __init__(self, directory: Path):
        self.dir: Path | None = directory

    def _off(self, why: str) -> None:
        warnings.warn(CacheEntryWarning(f"kernel cache {self.dir}: {why}; not used by this "
                                        f"compile (set {ENV}=0 to turn it off, or to "
                                        f"another directory)"), stacklevel=4)
        self.dir = None

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.o"

    def _read(self, key: str, suffix: str, read) -> bytes | None:
        """``read(path)`` -> (bytes, why not) of the entry ``key`` +
        ``suffix``: the bytes when they check; a bad entry removed with one
        warning (then a miss)."""
        from onnx_mlir_py.backend.cache_files import check_dir, unlink_verified
        if self.dir is None:
            return None
        path = self._path(key).with_suffix(suffix)
        try:
            if not check_dir(self.dir) or not check_dir(path.parent):
                return None
            data, reason = read(path)
        except UnsafeCacheError as e:
            self._off(str(e).replace("compile cache", "kernel cache"))
            return None
        except OSError as e:
            self._off(f"cannot be read: {e.strerror or e}")
            return None
        if reason is None:
            return data
        warnings.warn(CacheEntryWarning(f"kernel cache entry {path}: {reason}; removed, "
                                        f"compiling the kernel again"), stacklevel=4)
        try:
            unlink_verified(path)
        except OSError:
            pass
        return None

    def load(self, key: str) -> bytes | None:
        """The verified object of ``key``; None on a miss."""
        from onnx_mlir_py.backend.cache_files import read_verified
        return self._read(key, ".o", read_verified)

    def load_sidecar(self, key: str, suffix: str = ".t") -> bytes | None:
        """The sidecar of the tensor-level ``key`` (:mod:`.kernel_stubs`; the
        -O3 stage cache's entries: ``suffix`` ".o3"), checked as an object
        is (owner, mode, its recorded sha256) but for the ELF magic; None on
        a miss."""
        from onnx_mlir_py.backend.cache_files import _digest_path, read_checked

        def read(path):
            digest = read_checked(_digest_path(path))
            data = read_checked(path) if digest is not None else None
            if data is None or hashlib.sha256(data).hexdigest().encode() == digest.strip():
                return data, None
            return None, "its content hash differs from the recorded one"
        return self._read(key, suffix, read)

    def drop_sidecar(self, key: str, suffix: str = ".t") -> None:
        from onnx_mlir_py.backend.cache_files import unlink_verified
        if self.dir is not None:
            try:
                unlink_verified(self._path(key).with_suffix(suffix))
            except OSError:
                pass

    def store(self, key: str, data: bytes, suffix: str = ".o") -> None:
        """Store ``data`` under ``key`` (the caller checked that the
        compiler's sources did not change since the fingerprint: once for
        all, as that check stats every source file)."""
        from onnx_mlir_py.backend.cache_files import private_dir, store_verified
        if self.dir is None:
            return
        try:
            # no fsync: every load checks the sha256 (a power loss costs a recompile)
            store_verified(private_dir(private_dir(self.dir) / key[:2]) / f"{key}{suffix}", data,
                           durable=False)
        except UnsafeCacheError as e:
            self._off(str(e).replace("compile cache", "kernel cache"))
        except OSError as e:
            self._off(f"cannot be written: {e.strerror or e}")


# -- keyed at the memref level ------------------------------------------------

# an allocation: mark_alloc_sites gives it the model's node id (not the kernel's own)
_ALLOC = re.compile(r"\bmemref\.(?:re)?alloc\b")
# a parallel loop: outlined and run by the runtime's parallel-for (parallel_for.py)
_PARALLEL = re.compile(r"\bscf\.(?:parallel|forall)\b")
# module attributes the lowering of a function reads (data layout, target)
_LAYOUT_ATTRS = ("dlti.", "llvm.")


@dataclass
class Early:
    """The kernels keyed at the memref level (:func:`key_kernels`) of one
    compile: the hits' objects (in ``tmp``) and the misses' keys, for
    :func:`cached_kernels`."""
    tmp: Path
    target: str
    cache: _Store
    keys: dict = field(default_factory=dict)        # content name of a miss -> key
    objects: list = field(default_factory=list)     # the hits' objects
    hits: int = 0
    skipped: int = 0            # kernels left to the LLVM-level key
    calls: set = field(default_factory=set)     # runtime functions the hits call
    stubs: dict = field(default_factory=dict)       # kernel -> its tensor-level hit (a Stub)
    misses: dict = field(default_factory=dict)      # kernel -> its tensor-level key (a miss)
    pending: dict = field(default_factory=dict)     # kernel -> its tensor-level Summary (a miss)
    sidecars: dict = field(default_factory=dict)    # memref key -> the sidecar to store
    loaded: set = field(default_factory=set)        # memref keys of the hits
    stub_hits: int = 0
    allow_stubs: bool = True        # False: a compile again after a StubMismatch
    pool: object = None             # the compile's llvm_capi.Pool (kernel_ahead.py)
    ahead_parts: list = field(default_factory=list)     # (memref key, bitcode, object) submitted ahead
    nested: set = field(default_factory=set)    # keyed misses with several parallel loops (find_units)

    def stub(self, module: ir.Module) -> None:
        """Before bufferization: the tensor-level keys (:mod:`.kernel_stubs`)."""
        from onnx_mlir_py.codegen.kernel_stubs import stub_kernels
        stub_kernels(module, self)

    def ahead(self, module: ir.Module) -> None:
        """Right after :meth:`stub`: the misses compiled ahead (:mod:`.kernel_ahead`)."""
        from onnx_mlir_py.codegen.kernel_ahead import compile_ahead
        compile_ahead(module, self)

    def summarize(self, module: ir.Module) -> None:
        """Once bufferization prepared the module: the misses' summaries."""
        from onnx_mlir_py.codegen.kernel_stubs import summarize_misses
        summarize_misses(module, self)

    def __call__(self, module: ir.Module) -> None:
        key_kernels(module, self)


def _layout(module: ir.Module) -> str:
    """The module attributes a function's lowering reads, as text."""
    attrs = module.operation.attributes
    return "".join(f"{attrs[i].name}={attrs[i].attr}\0" for i in range(len(attrs))
                   if attrs[i].name.startswith(_LAYOUT_ATTRS))


def early_keys(tmp: Path, opt_level: int, triple: str, cpu: str | None,
               features: str) -> Early | None:
    """The :class:`Early` of a compile for ``tmp`` and the target; None when
    the cache is off or unusable for the target."""
    from onnx_mlir_py.codegen import llvm_capi
    directory = cache_dir()
    if directory is None or not llvm_capi.usable(triple, cpu):
        return None
    return Early(tmp, _target(opt_level, triple, cpu, features), _Store(directory))


def _target(opt_level: int, triple: str, cpu: str | None, features: str) -> str:
    from onnx_mlir_py.backend.cache import compiler_fingerprint
    return f"{triple}\0{cpu}\0{features}\0O{opt_level}\0{compiler_fingerprint()}"


def memref_head(module: ir.Module, early: Early) -> bytes:
    """What every memref-level key of ``module``'s kernels starts with: the
    format, the target (with the opt level and fingerprint), the module's
    data layout."""
    return _FORMAT + b"memref\0" + early.target.encode() + b"\0" + _layout(module).encode()


def memref_key(head: bytes, op: ir.Operation, name: str) -> tuple[str, str] | None:
    """(key, printed text) of the memref-level kernel ``op`` named ``name``
    (its own name a placeholder, after ``head``: :func:`memref_head`); None
    when it cannot be keyed here: it allocates, holds a ``dense_resource``
    or references another symbol (:func:`key_kernels`, and the misses
    compiled ahead: :mod:`.kernel_ahead`)."""
    text = _print(op)
    if _ALLOC.search(text) or _RESOURCE in text or any(s != name for s in _symbols(text)):
        return None
    return hashlib.sha256(head + _rename(text, {name: NAME_PREFIX}).encode()).hexdigest(), text


def nested_parallel(text: str) -> bool:
    """More than one parallel loop in a kernel's text (one may hold another:
    :func:`find_units`' ``nested``)."""
    return len(_PARALLEL.findall(text)) > 1


def key_kernels(module: ir.Module, early: Early) -> None:
    """Key each kernel function of the bufferized ``module`` (``func.func``
    over memrefs) by its text, its own name a placeholder (+ the target,
    the compiler fingerprint and opt level, the module's data layout): the
    rest of its lowering (loops, parallel-loop bodies, LLVM dialect) is this
    compiler's deterministic function of these. Each is renamed
    ``__om_kc_<key>`` (copies that print the same merged); a hit becomes an
    external declaration here, before those stages, and its cached object is
    linked; a miss is lowered with the model and keyed by this key in
    :func:`cached_kernels`. Left to the LLVM-level key: a kernel that
    references a symbol (a global, a function), holds a ``dense_resource``
    constant or allocates (its allocation
    site ids are the model's), and every kernel of a module with bufferized
    chunks (``merge_identical_functions`` then marks shared loop bodies
    noinline, a module-wide choice)."""
    from onnx_mlir_py.codegen.bufferize_chunks import PREFIX as CHUNK_PREFIX
    from onnx_mlir_py.codegen.kernel_stubs import resolve_stubs, sidecar
    from onnx_mlir_py.ir_util import walk_ops
    stubbed = resolve_stubs(module, early)      # first: a stub is never lowered
    with module.context:
        ops = [op.operation for op in module.body.operations]
        names = [ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes
                 else "" for op in ops]
        if any(n.startswith(CHUNK_PREFIX) for n in names):
            return
        head = memref_head(module, early)
        calls: dict[str, list] = {}     # kernel -> its calls (kernels call no kernel)
        for op, name in zip(ops, names):
            if op.name == "func.func" and not name.startswith(KERNEL_PREFIX):
                for c in walk_ops(op, "func.call"):
                    calls.setdefault(ir.FlatSymbolRefAttr(c.attributes["callee"]).value,
                                     []).append(c)
        seen: set[str] = set(stubbed)
        for op, name in zip(ops, names):
            if op.name != "func.func" or not name.startswith(KERNEL_PREFIX) \
                    or not len(op.regions[0].blocks):
                continue
            keyed = memref_key(head, op, name)
            if keyed is None:
                early.skipped += 1
                continue
            key, text = keyed
            new = NAME_PREFIX + key[:32]
            if name in early.pending:       # its tensor-level entry, stored with the object
                early.sidecars[key] = sidecar(
                    early.pending[name], key,
                    str(ir.TypeAttr(op.attributes["function_type"]).value),
                    bool(_PARALLEL.search(text)))
            for c in calls.get(name, ()):
                c.attributes["callee"] = ir.FlatSymbolRefAttr.get(new)
            if new in seen:             # the same memref-level kernel: one function
                op.erase()
                continue
            seen.add(new)
            data = early.cache.load(key)
            if data is None:
                op.attributes["sym_name"] = ir.StringAttr.get(new)
                early.keys[new] = key
                if nested_parallel(text):
                    early.nested.add(new)
                continue
            early.loaded.add(key)
            obj = early.tmp / f"kernel_m{len(early.objects)}.o"
            obj.write_bytes(data)
            early.objects.append(str(obj))
            early.hits += 1
            if _PARALLEL.search(text):        # its loop bodies run on the thread pool
                from onnx_mlir_py.codegen.parallel_for import PARALLEL_FOR_FN
                early.calls.add(PARALLEL_FOR_FN)
            with ir.InsertionPoint(op), op.location:
                ir.Operation.create("func.func", attributes={
                    "sym_name": ir.StringAttr.get(new),
                    "function_type": op.attributes["function_type"],
                    "sym_visibility": ir.StringAttr.get("private")}, regions=1)
            op.erase()


def _calls_unit(fn: _Fn, name: str, u: Unit) -> bool:
    """A parallel loop's body that references another function of the unit:
    the launcher of a nested parallel loop (a dynamic batch's loop around a
    kernel's). Known only for a body :func:`find_units` printed (a unit
    keyed at the memref level does not print its bodies)."""
    return fn._symbols is not None and any(s != name and s in u.renamed for s in fn._symbols)


def _unit_ir(u: Unit, defined: dict, declared: dict) -> bytes:
    """LLVM bitcode of the unit as a module of its own: its functions and
    declarations cloned from the model's module (no text printed and parsed
    back), renamed to their content names, the kernel external and hidden
    (the model's code calls it), the rest internal. The uses are renamed
    in the functions that are no parallel loop's body (:func:`_is_body`:
    a body calls no function of the module; the bodies are most of the
    unit's ops, which each rename walked: ResNet-50 0.05 -> 0.02 s CPU),
    and in a body that calls one of the unit's functions (:func:`_calls_unit`:
    without, its clone called a missing symbol, the translation failed with
    LLVM's verifier printing to stderr, and the kernel stayed in the model)."""
    from onnx_mlir_py.codegen import llvm_capi
    with defined[u.root].op.context, ir.Location.unknown():
        m = ir.Module.create()
        ip = ir.InsertionPoint(m.body)
        for d in u.decl_names:
            declared[d][0].clone(ip)
        clones = [defined[n].op.clone(ip).operation for n in u.names]
        callers = [op for n, op in zip(u.names, clones)
                   if not _is_body(n) or _calls_unit(defined[n], n, u)]
        for n, op in zip(u.names, clones):
            op.attributes["sym_name"] = ir.StringAttr.get(u.renamed[n])
            for c in callers:
                ir.SymbolTable.replace_all_symbol_uses(n, u.renamed[n], c)
        clones[0].attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<external>")
        clones[0].attributes["visibility_"] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), 1)        # hidden
        return llvm_capi.translate(m, bitcode=True)


@dataclass
class Kernels:
    """What :func:`cached_kernels` leaves to its caller: the objects to
    link (hits, then misses) and the misses' LLVM bitcode (``parts``) to
    compile into their objects (``outputs``), with the model's own parts
    (one :func:`.llvm_capi.compile_parts` for all); then :meth:`store`."""
    objects: list[str] = field(default_factory=list)
    parts: list[Path] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    cache: _Store | None = None
    pool: object = None         # the llvm_capi.Pool the misses were submitted to, if any
    sidecars: dict = field(default_factory=dict)    # memref key -> tensor-level sidecar
    loaded: set = field(default_factory=set)        # memref keys of the hits

    def store(self) -> None:
        """Store the compiled misses, then the sidecars of the tensor-level
        keys (:mod:`.kernel_stubs`) of those and of the memref-level hits
        (unless the compiler's sources changed since its fingerprint:
        compiled by other sources, not stored)."""
        if not self.parts and not self.sidecars:
            return
        from onnx_mlir_py.backend.cache import sources_unchanged
        if sources_unchanged():
            for key, obj in zip(self.keys, self.outputs):
                self.cache.store(key, Path(obj).read_bytes())
            there = set(self.keys) | self.loaded        # the objects in the cache
            for key, side in self.sidecars.items():
                if key in there:
                    self.cache.store(json.loads(side)["key"], side, ".t")


def cached_kernels(module: ir.Module, tmp: Path, opt_level: int, triple: str, cpu: str | None,
                   features: str, timings, early: Early | None = None,
                   pool=None) -> Kernels:
    """The objects of ``module``'s cacheable kernels (LLVM dialect, changed
    in place: see the module docstring): hits read from the cache, misses
    written as bitcode for the caller to compile (then
    :meth:`Kernels.store`); none when the cache is off or unusable for the
    target (the module is then untouched). ``early``: the kernels keyed at
    the memref level (their hits' objects come first, their misses are
    stored under their key). ``pool``: an :class:`.llvm_capi.Pool`, given
    each miss as soon as its bitcode is written (its threads compile it while
    this thread goes on, #29; ``Kernels.pool``)."""
    from onnx_mlir_py.codegen import llvm_capi
    global LAST
    LAST = Stats()
    directory = cache_dir()
    if directory is None or not llvm_capi.usable(triple, cpu):
        return Kernels()
    keyed = early.keys if early is not None else {}
    first = list(early.objects) if early is not None else []
    with timings.phase("codegen: kernel cache"):
        with module.context:
            units, skipped, defined, declared = find_units(
                module, keyed, early.nested if early is not None else ())
            hits = early.hits if early is not None else 0
            LAST = Stats(units=len(units) + hits, hits=hits, skipped=skipped, early_hits=hits,
                         tensor_hits=early.stub_hits if early is not None else 0)
            out = Kernels(objects=first, cache=early.cache if early is not None
                          else _Store(directory))
            if early is not None:
                out.sidecars, out.loaded = early.sidecars, early.loaded
                for key, src, obj in early.ahead_parts:     # on the pool already
                    out.keys.append(key)
                    out.parts.append(Path(src))
                    out.outputs.append(obj)
                    out.pool = early.pool
                LAST.units += len(early.ahead_parts)
            if not units:
                out.objects += out.outputs
                LAST.misses = len(out.parts)
                if not out.parts:
                    out.store()         # the sidecars of memref-level hits
                return out
            name_units(units, _target(opt_level, triple, cpu, features), keyed)
            distinct: dict[str, Unit] = {}
            for u in units:
                distinct.setdefault(u.name, u)
            failed = set()
            for i, u in enumerate(distinct.values()):
                data = None if u.name in keyed else out.cache.load(u.key)   # keyed: missed
                obj = tmp / f"kernel{i}.o"
                if data is not None:
                    obj.write_bytes(data)
                    out.objects.append(str(obj))
                    continue
                try:
                    src = obj.with_suffix(".bc")
                    src.write_bytes(_unit_ir(u, defined, declared))
                except (ir.MLIRError, CompileError):
                    failed.add(u.name)      # not cached: compiled with the model, as before
                    continue
                out.parts.append(src)
                out.outputs.append(str(obj))
                out.keys.append(u.key)
                if pool is not None:
                    pool.submit(src, obj)
                    out.pool = pool
            if failed:
                units = [u for u in units if u.name not in failed]
                LAST.skipped += len(failed)
            declare_units(module, units, defined)
    out.objects += out.outputs
    LAST.misses = len(out.parts)
    LAST.hits += len(distinct) - (LAST.misses - len(early.ahead_parts if early else ())) \
        - len(failed)
    if not out.parts:
        out.store()
    return out
