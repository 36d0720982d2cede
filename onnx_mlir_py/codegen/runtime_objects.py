"""The C runtime's objects, compiled once and reused by every link.

Every model library links the same C runtime (``runtime/c``: ``om_runtime.c``,
``om_cpu.c``, ``om_seq.c``, ``om_string.c``, ``om_image.c``, and ``om_parallel.c`` /
``om_profile.c`` when used). Compiling them again with ``gcc -O2`` for each
library cost ~0.5 s of CPU per compile (#29), a large share of a small
model's compile and of the test suite. They are compiled once into
``<cache>/runtime/<key>/`` (the compile cache's directory, see
``backend/cache.py``), keyed by the sources and headers of ``runtime/c``, the
gcc version and the flags, and linked as objects.

The folder follows the compile cache's rules (``backend/cache_files.py``): a
private directory (0700, owned by this user, not writable by others; an
object linked into a library is code), files written atomically, each
object checked against its recorded sha256 before use; a missing, corrupt or
foreign object is compiled again. When the cache cannot be used (read-only,
unsafe, full) the sources are compiled into the link's work folder, as
before: the cache only saves time, it never fails a compile.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import run, tool
from onnx_mlir_py.errors import UnsafeCacheError

CFLAGS = ("-c", "-fPIC", "-O2", "-std=gnu11", "-fvisibility=default")


@lru_cache(maxsize=1)
def _key() -> str:
    """Hash of what decides the objects: gcc's version, the flags, every
    source and header of ``runtime/c``."""
    h = hashlib.sha256()
    h.update(run([tool("gcc"), "--version"], what="gcc --version"))
    h.update(" ".join(CFLAGS).encode())
    for p in sorted(RUNTIME_DIR.iterdir()):
        if p.suffix in (".c", ".h"):
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:24]


def _compile(source: str, out: Path) -> None:
    run([tool("gcc"), *CFLAGS, f"-I{RUNTIME_DIR}", "-o", str(out), str(RUNTIME_DIR / source)],
        what=f"compiling the C runtime ({source})")


def _cached(source: str, folder: Path, tmp: Path) -> Path:
    """``folder``'s verified object of ``source``, compiled (in ``tmp``) and
    stored first when it is missing or does not match its recorded hash."""
    from onnx_mlir_py.backend.cache_files import read_checked, unlink_quiet, write_atomic
    obj, digest_file = folder / (source[:-2] + ".o"), folder / (source[:-2] + ".o.sha256")
    data, digest = read_checked(obj), read_checked(digest_file)
    if data is not None and digest is not None and data[:4] == b"\x7fELF" \
            and hashlib.sha256(data).hexdigest().encode() == digest.strip():
        return obj
    for p in (obj, digest_file):
        unlink_quiet(p)
    built = tmp / (source[:-2] + ".o")
    _compile(source, built)
    data = built.read_bytes()
    write_atomic(obj, data)
    write_atomic(digest_file, hashlib.sha256(data).hexdigest().encode())
    return obj


def runtime_objects(sources: list[str], tmp: Path) -> list[Path]:
    """Objects of the runtime ``sources`` to link: the cached ones, or
    (cache unusable) compiled into ``tmp``."""
    from onnx_mlir_py.backend.cache import cache_dir
    from onnx_mlir_py.backend.cache_files import private_dir
    try:
        folder = private_dir(private_dir(cache_dir()) / "runtime") / _key()
        private_dir(folder)
        return [_cached(s, folder, tmp) for s in sources]
    except (OSError, UnsafeCacheError):
        pass
    objs = [tmp / (s[:-2] + ".o") for s in sources]
    for s, o in zip(sources, objs):
        _compile(s, o)
    return objs
