"""Model path -> cache key, so a session on an unchanged model file needs
neither to read nor to hash it (ResNet-18's 45 MB took ~150 ms of a 250 ms
start under load).

An entry is named by a hash of (absolute path, the file's device, inode,
size, mtime and ctime in ns, compiler fingerprint, options) and holds the
cache key of the file's bytes. Any write to the file changes its ctime (which
no utime call can set back), so an edited or replaced file misses. As git
does for its index ("racy git"), a file whose mtime/ctime is within
:data:`SETTLE_S` of now is not indexed: on a file system with coarse
timestamps a write in the same tick would keep them. A model with external
data is never indexed (its other files are part of the key).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from onnx_mlir_py.backend.cache import CompileCache, compiler_fingerprint
from onnx_mlir_py.backend.cache_files import check_dir, private_dir, read_checked, write_atomic

SETTLE_S = 2.0


def _entry(cache: CompileCache, path: str, st: os.stat_result, options: dict) -> Path:
    ident = [os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
             st.st_ctime_ns, compiler_fingerprint(), options]
    h = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()
    return cache.dir / "paths" / h[:2] / f"{h[:40]}.key"


def lookup(cache: CompileCache, path: str, st: os.stat_result, options: dict) -> str | None:
    """The cache key indexed for this file (as it is now), or None."""
    entry = _entry(cache, path, st, options)
    try:        # (an index another user could write is refused, as the cache is)
        if not (check_dir(cache.dir) and check_dir(entry.parent.parent) and
                check_dir(entry.parent)):
            return None
        key = (read_checked(entry) or b"").decode(errors="replace").strip()
    except OSError:
        return None
    return key if len(key) == 40 and all(c in "0123456789abcdef" for c in key) else None


def record(cache: CompileCache, path: str, st: os.stat_result, options: dict, key: str) -> None:
    """Index ``key`` for the file whose stat (taken before it was read) is
    ``st``, unless the file changed since or is too fresh to trust."""
    try:
        now = os.stat(path)
    except OSError:
        return
    same = (now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == \
        (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if not same or time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < SETTLE_S * 1e9:
        return
    entry = _entry(cache, path, st, options)
    try:
        private_dir(private_dir(private_dir(cache.dir) / "paths") / entry.parent.name)
        write_atomic(entry, key.encode())
    except OSError:
        pass                                        # an index we cannot write: no index
