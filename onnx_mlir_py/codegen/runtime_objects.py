"""The C runtime's objects, compiled once and reused by every link.

Every model library links the same C runtime (``runtime/c``: ``om_runtime.c``,
``om_cpu.c``, ``om_seq.c``, ``om_string.c``, and ``om_parallel.c`` /
``om_profile.c`` / ``om_image.c`` when used). Compiling them again with
``gcc -O2`` for each library cost ~0.5 s of CPU per compile (#29), a large
share of a small model's compile and of the test suite. They are compiled once into
``<cache>/runtime/<key>/`` (the compile cache's directory, see
``backend/cache.py``), keyed by the sources and headers of ``runtime/c``, the
C compiler (its executable's path, size and time) and the flags, and linked
as objects.

The folder follows the compile cache's rules (``backend/cache_files.py``): a
private directory (0700, owned by this user, not writable by others; an
object linked into a library is code), files written atomically, each
object checked against its recorded sha256 before use; a missing, corrupt or
foreign object is compiled again. On an empty cache the missing objects are
compiled by gcc processes started at the compile's start, before the
model's import (:class:`Prefetch`, ``link.runtime_prefetch``; the image
decoders at codegen's start, only for a model that declares them,
``link._prefetched``), on another core, instead of by the link (a cold
MNIST compile 1.64 -> 1.13 s, ResNet-18 5.6 -> 4.5 s; the start before the
import: MNIST's link 0.69 -> 0.22 s): one after the other, one chain per core
but the compile's own, and the link compiles itself those a chain has not
started when it needs them. When the cache cannot be used (read-only,
unsafe, full) the sources are compiled into the link's work folder, as
before: the cache only saves time, it never fails a compile.

The entry wrapper (``cwrapper.generate_entry_c``, the model's own C source)
is kept the same way, one object per wrapper text (:func:`entry_object`):
a model of the same signature (the same model with other weights) links
the object of the first.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from onnx_mlir_py.backend.cache_files import elf_verified
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import run, tool
from onnx_mlir_py.errors import UnsafeCacheError

CFLAGS = ("-c", "-fPIC", "-O2", "-std=gnu11", "-fvisibility=default")
PREFETCH = True         # False: missing objects are compiled by the link (tests)


def compiler_identity(cc: str) -> bytes:
    """What tells one C compiler from another: its executable's real path,
    size, inode and time (any install or upgrade changes them), else (not a
    file found) its ``--version``. Asking ``gcc --version`` cost each
    compile ~60 ms before its import, waiting on a process."""
    import os
    import shutil
    path = shutil.which(cc)
    try:
        st = os.stat(os.path.realpath(path)) if path else None
    except OSError:
        st = None
    if st is None:
        return run([cc, "--version"], what=f"{cc} --version")
    return (f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}"
            .encode())


@lru_cache(maxsize=1)
def _key() -> str:
    """Hash of what decides the objects: the C compiler
    (:func:`compiler_identity`), the flags, every source and header of
    ``runtime/c``."""
    h = hashlib.sha256()
    h.update(compiler_identity(tool("gcc")))
    h.update(" ".join(CFLAGS).encode())
    for p in sorted(RUNTIME_DIR.iterdir()):
        if p.suffix in (".c", ".h"):
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _command(source: str, out: Path) -> list[str]:
    return _gcc(RUNTIME_DIR / source, out)


def _gcc(source: Path, out: Path) -> list[str]:
    return [tool("gcc"), *CFLAGS, f"-I{RUNTIME_DIR}", "-o", str(out), str(source)]


def _compile(source: str, out: Path) -> None:
    run(_command(source, out), what=f"compiling the C runtime ({source})")


def _done(out: Path) -> Path:
    """The mark a prefetch chain leaves when ``out``'s compile ended well."""
    return out.with_name(out.name + ".done")


def _claim(out: Path) -> Path:
    """The folder whose creation (atomic: one creator) makes ``out``'s compile
    the creator's: the prefetch chain's, or the link's (:meth:`Prefetch.claim`)."""
    return out.with_name(out.name + ".claim")


def _chain(sources: list[str], outs: list[Path]) -> str:
    """The shell script compiling ``sources`` into ``outs`` one after the
    other, each unless the link has claimed it, marking each that succeeded
    (a failed one does not stop the next)."""
    import shlex
    q = shlex.quote
    return "\n".join(f"if mkdir {q(str(_claim(o)))} 2>/dev/null; then "
                     f"{shlex.join(_command(s, o))} && : > {q(str(_done(o)))}; fi"
                     for s, o in zip(sources, outs))


def _folder() -> Path:
    """The cache's object folder (created private); OSError /
    UnsafeCacheError when the cache cannot be used."""
    from onnx_mlir_py.backend.cache import cache_dir
    from onnx_mlir_py.backend.cache_files import private_dir
    folder = private_dir(private_dir(cache_dir()) / "runtime") / _key()
    return private_dir(folder)


def _object(source: str, folder: Path) -> Path:
    return folder / (source[:-2] + ".o")


def _valid(source: str, folder: Path) -> bool:
    """``folder`` holds ``source``'s object and it matches its recorded hash."""
    return elf_verified(_object(source, folder))


def _cached(source: str, folder: Path, tmp: Path, prefetched=None) -> Path:
    """``folder``'s verified object of ``source``, compiled (in ``tmp``, or
    taken from ``prefetched``) and stored first when it is missing or does
    not match its recorded hash."""
    from onnx_mlir_py.backend.cache_files import store_verified, unlink_verified
    obj = _object(source, folder)
    if _valid(source, folder):
        return obj
    unlink_verified(obj)
    built = prefetched.take(source) if prefetched is not None else None
    if built is None:
        built = tmp / (source[:-2] + ".o")
        _compile(source, built)
    store_verified(obj, built.read_bytes(), durable=False)
    return obj


def runtime_objects(sources: list[str], tmp: Path, prefetched=None) -> list[Path]:
    """Objects of the runtime ``sources`` to link: the cached ones (missing
    ones compiled, or taken from a :class:`Prefetch`), or (cache unusable)
    compiled into ``tmp``."""
    try:
        folder = _folder()
        if prefetched is not None:
            prefetched.claim(sources)   # what its chains have not started: compiled here
        return [_cached(s, folder, tmp, prefetched) for s in sources]
    except (OSError, UnsafeCacheError):
        pass
    objs = [tmp / (s[:-2] + ".o") for s in sources]
    for s, o in zip(sources, objs):
        _compile(s, o)
    return objs


def _entry_cached(entry: Path) -> Path:
    """The cache's object path of the entry wrapper source ``entry`` (by its
    text); OSError / UnsafeCacheError when the cache cannot be used."""
    return _folder() / f"entry-{hashlib.sha256(entry.read_bytes()).hexdigest()[:32]}.o"


def entry_object(entry: Path, started=None) -> Path:
    """The object of the entry wrapper source ``entry`` (``cwrapper.
    generate_entry_c``, written by the link): the cache's object of the
    same text (a model of the same signature, e.g. one with other weights),
    else compiled beside ``entry`` and stored (~40 ms of gcc per library,
    #29). Kept as the runtime's objects are (same folder, key and checks),
    one per distinct wrapper. ``started``: the :class:`EntryBuild` of
    ``entry``, whose gcc ran meanwhile."""
    from onnx_mlir_py.backend.cache_files import store_verified, unlink_verified
    built = entry.with_suffix(".o")
    try:
        obj = _entry_cached(entry)
        if elf_verified(obj):
            return obj
        unlink_verified(obj)
    except (OSError, UnsafeCacheError):
        obj = None
    if started is None or not started.wait():
        # (not started, or it failed: compiled here, its error reported as usual)
        run(_gcc(entry, built), what="compiling the entry wrapper (entry.c)")
    if obj is not None:
        try:
            store_verified(obj, built.read_bytes(), durable=False)
        except OSError:
            pass                        # the cache only saves time
    return built


class EntryBuild:
    """The entry wrapper ``entry`` (already written) compiled in the
    background when the cache lacks its object: started once the lowered
    model tells the wrapper's text, so that gcc runs while LLVM compiles the
    model's last parts (the compile's own thread only waits then) instead of
    in the link (#29). :func:`entry_object` collects it; :meth:`close` (every
    way out) kills a gcc still running."""

    def __init__(self, entry: Path):
        self.entry = entry
        self.proc = None
        try:
            if elf_verified(_entry_cached(entry)):
                return                  # cached: nothing to compile
        except (OSError, UnsafeCacheError):
            pass
        from onnx_mlir_py.tool_process import spawn_quiet
        try:
            # gcc's temporaries in the entry's folder (the link's work folder)
            self.proc = spawn_quiet(_gcc(entry, entry.with_suffix(".o")), entry.parent)
        except OSError:
            self.proc = None

    def wait(self) -> bool:
        """Whether the background compile ran and ended well."""
        if self.proc is None:
            return False
        ok = self.proc.wait() == 0 and self.entry.with_suffix(".o").is_file()
        self.proc = None
        return ok

    def close(self) -> None:
        if self.proc is not None:
            from onnx_mlir_py.tool_process import kill_group
            kill_group(self.proc)
            self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Prefetch:
    """gcc compiling the runtime sources the cache lacks, started at the
    compile's start (:func:`~.link.runtime_prefetch`, before the model's
    import) or at codegen's (:func:`~.link.to_library`, the sources only the
    lowered model tells) and collected by the link (:func:`runtime_objects`).

    The compile's Python stages hold the GIL, so a thread could not run the
    compiles meanwhile; processes started up front can: on a new machine (an
    empty cache) the ~1 s of gcc runs on another core during the import and
    the tensor stages instead of in the link (#29). A source whose compile
    failed, or was not started, is compiled by the link as before (its error
    then reported the usual way); the processes still running when the
    compile ends (an error, an interrupt) are killed (:meth:`close`).
    ``tmp``: the folder of the objects, else one of its own (removed by
    :meth:`close`)."""

    def __init__(self, sources: list[str] = (), tmp: Path | None = None):
        self.running: dict[str, tuple] = {}
        self.others: list = []          # the tool launcher's build (tool_launcher.build_ahead)
        self.folder: Path | None = None
        self.tmp = tmp
        self._own_tmp: Path | None = None
        self._usable = True
        try:
            self.start(sources)
        except BaseException:   # an interrupt (in the tool launcher's first build):
            self.close()        # no caller's `with` to close it, nor its folder
            raise

    def start(self, sources: list[str]) -> None:
        """Start the compiles of the ``sources`` the cache lacks that are
        not running yet: one after the other, in one process (a shell
        running gcc per source) per core but this compile's, so they do not
        take its core from the compile's own stages (five gcc at once left
        it ~1/4 of a core during the import of a cold ResNet-50, #29)."""
        sources = [s for s in sources if s not in self.running]
        if not PREFETCH or not sources or not self._usable:
            return
        try:
            folder = self.folder or _folder()
            missing = [s for s in sources if not _valid(s, folder)]
        except (OSError, UnsafeCacheError):
            self._usable = False
            return                      # the link compiles into its work folder
        self.folder = folder
        if missing and self.tmp is None:
            from onnx_mlir_py.scratch import make_temp_dir
            self.tmp = self._own_tmp = make_temp_dir()
        from onnx_mlir_py import tool_launcher
        from onnx_mlir_py.tool_process import spawn_quiet, split_jobs
        chains = max(1, split_jobs() - 1)
        # a new cache has no tool launcher either: a gcc of its own builds it
        # beside the chains (all started without it), instead of gcc on the
        # compile's thread before the import (~60 ms); ahead of the chains,
        # it made a small model's link compile their last source itself
        launcher = tool_launcher.wanted() and missing
        if launcher:
            import shlex
            built = self.tmp / "prefetch_launcher"
            try:
                p = spawn_quiet(["/bin/sh", "-c",
                                 f"{shlex.join(tool_launcher.build_command(built))} && "
                                 f": > {shlex.quote(str(_done(built)))}"], self.tmp,
                                launch=False)
            except OSError:
                launcher = False
            else:
                self.others.append(p)
                tool_launcher.build_ahead(p, built, _done(built))
        for batch in (missing[i::chains] for i in range(chains)):
            if not batch:
                continue
            outs = [self.tmp / ("prefetch_" + s[:-2] + ".o") for s in batch]
            try:
                # gcc's temporaries in the objects' folder: a compile killed
                # by close() (an error, Ctrl-C) leaves nothing elsewhere
                p = spawn_quiet(["/bin/sh", "-c", _chain(batch, outs)], self.tmp,
                                launch=not launcher)
            except OSError:
                break
            for s, out in zip(batch, outs):
                self.running[s] = (p, out)

    def claim(self, sources: list[str]) -> None:
        """The ``sources`` whose chain has not started them are the caller's
        from now on (:meth:`take` gives None, the chain skips them): the
        link compiles them beside the chain, when it comes first (a small
        model's)."""
        for s in sources:
            entry = self.running.get(s)
            if entry is None:
                continue
            try:
                _claim(entry[1]).mkdir()
            except FileExistsError:
                continue                # started by its chain: taken when done
            except OSError:
                return
            del self.running[s]

    def take(self, source: str) -> Path | None:
        """The object of ``source`` once its compile has ended well; None
        when it failed or was not started."""
        entry = self.running.pop(source, None)
        if entry is None:
            return None
        from onnx_mlir_py.tool_process import marked_output
        p, out = entry
        return marked_output(p, out, _done(out))    # (its chain compiles the sources before it)

    def close(self) -> None:
        """Store the objects the link did not need whose compile has ended
        well (the next library may need them: the thread pool, the image
        decoders); kill the compiles still running."""
        from onnx_mlir_py.backend.cache_files import store_verified
        from onnx_mlir_py.tool_process import kill_group
        for p in [*{id(p): p for p, _ in self.running.values()}.values(), *self.others]:
            kill_group(p)               # a chain still running (no-op when it has ended)
        self.others.clear()
        for source, (p, out) in self.running.items():
            if _done(out).exists() and out.is_file() and self.folder is not None:
                try:
                    store_verified(_object(source, self.folder), out.read_bytes(),
                                   durable=False)
                except OSError:
                    pass                # the cache only saves time
        self.running.clear()
        if self._own_tmp is not None:
            import shutil
            shutil.rmtree(self._own_tmp, ignore_errors=True)
            self._own_tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
