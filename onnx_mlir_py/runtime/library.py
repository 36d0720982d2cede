"""Opening a model library with ctypes: the path to load (a private copy
when a recompiled file replaced one already loaded), typed entry points, and
the check that this CPU has the features the library was compiled for.
"""
from __future__ import annotations

import ctypes
import json
import os

from onnx_mlir_py.runtime.errors import ModelRunError

# abspath -> identity of the file first loaded from it. dlopen returns the
# already-loaded library for a path it has seen, so a model recompiled to the
# same path would silently run the old code: such a file is loaded from a
# private copy instead.
_LOADED: dict[str, tuple[int, int, int]] = {}
_COPIES: list[str] = []


def loadable_path(path: str) -> str:
    st = os.stat(path)
    ident = (st.st_dev, st.st_ino, st.st_mtime_ns)
    first = _LOADED.setdefault(path, ident)
    if first == ident:
        return path
    import atexit
    import shutil
    import tempfile
    fd, copy = tempfile.mkstemp(suffix=".so", prefix="omp-reload-")
    os.close(fd)
    shutil.copyfile(path, copy)
    if not _COPIES:
        atexit.register(lambda: [os.unlink(c) for c in _COPIES if os.path.exists(c)])
    _COPIES.append(copy)
    return copy


def bind(lib, name, restype, argtypes):
    """``lib.name`` with its ctypes result and argument types set."""
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = restype, argtypes
    return fn


def check_target(lib, path: str) -> dict | None:
    """The library's target record ({"cpu", "features"}); ModelRunError when
    this CPU lacks a feature it was compiled for (its code would die of
    SIGILL). Libraries from before the record have none: None."""
    info = getattr(lib, "omTargetInfo", None)
    if info is None:
        return None
    info.restype, info.argtypes = ctypes.c_char_p, []
    check = bind(lib, "omCheckTarget", ctypes.c_char_p, [])
    missing = check()
    if missing:
        raise ModelRunError(f"cannot run {path}: {missing.decode(errors='replace')}")
    return json.loads(info().decode())
