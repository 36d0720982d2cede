"""Opening a model library with ctypes: which file to load, sharing it
between sessions and unloading it when no session uses it, typed entry
points, and the check that this CPU has the features the library was
compiled for.

Loading (:func:`acquire`, :func:`release`; ``ExecutionSession`` holds one
reference from its creation to its collection):

- Sessions on an unchanged file share one loaded library.
- ``dlopen`` returns the already-loaded library for a path it has seen, so a
  model recompiled to the same path would silently run the old code. When
  the file at a path changed (device, inode, size or mtime): if no session
  uses the old library, it is unloaded and the path loaded again; else the
  new file is loaded from a private copy (``omp-reload-<pid>-*.so`` in the
  temp directory, removed as soon as it is mapped, so nothing is left even
  after a SIGKILL).
- A library no session uses any more is unloaded (its thread pool stopped
  and joined, ``omPoolShutdown``, then ``dlclose``) when it was a private
  copy or its file was replaced; a current one stays loaded for the next
  session. So opening a new file at one path again and again keeps one or
  two libraries mapped and their threads, not one per version. A library
  with a pool but without ``omPoolShutdown`` (built before it existed)
  is never unloaded.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import threading

from onnx_mlir_py.runtime.errors import ModelRunError
from onnx_mlir_py.scratch import RELOAD_PREFIX, temp_file


def _identity(path: str) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class LoadedLibrary:
    """One dlopen'd model library and the sessions using it (``refs``)."""

    def __init__(self, path: str, ident: tuple, copy: bool):
        self.path, self.ident, self.copy = path, ident, copy
        self.refs = 0
        self.unloaded = False
        if not copy:
            self.cdll = ctypes.CDLL(path)
            return
        tmp = temp_file(RELOAD_PREFIX, ".so")
        try:
            shutil.copyfile(path, tmp)
            self.cdll = ctypes.CDLL(tmp)
        finally:
            os.unlink(tmp)      # mapped (or failed): the file is not needed

    def unload(self) -> bool:
        """Stop the library's pool and dlclose it; False when it cannot be
        (a pool without omPoolShutdown): it stays loaded."""
        lib = self.cdll
        shutdown = getattr(lib, "omPoolShutdown", None)
        if shutdown is None and getattr(lib, "omSetNumThreads", None) is not None:
            return False
        if shutdown is not None:
            shutdown.restype, shutdown.argtypes = None, []
            shutdown()
        import _ctypes
        _ctypes.dlclose(lib._handle)
        self.unloaded = True
        return True


# abspath -> the libraries loaded for it, the one loaded by the path name
# itself (at most one: dlopen shares it) first
_libs: dict[str, list[LoadedLibrary]] = {}
_lock = threading.RLock()


def _loaded_by_name(path: str) -> bool:
    """True while the dynamic loader still holds a library opened as ``path``."""
    import _ctypes
    try:
        handle = _ctypes.dlopen(path, os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    _ctypes.dlclose(handle)      # NOLOAD took a reference too
    return True


def acquire(path: str) -> LoadedLibrary:
    """The loaded library for the model file ``path`` (absolute), one more
    reference to it. OSError when it cannot be loaded."""
    ident = _identity(path)
    with _lock:
        libs = _libs.setdefault(path, [])
        for lib in libs:
            if lib.ident == ident and not lib.unloaded:
                lib.refs += 1
                return lib
        direct = next((lib for lib in libs if not lib.copy), None)
        if direct is not None and direct.refs == 0 and direct.unload():
            libs.remove(direct)
            direct = None
        if direct is None and not _loaded_by_name(path):
            lib = LoadedLibrary(path, ident, copy=False)
        else:           # the name is taken by a library in use: a private copy
            lib = LoadedLibrary(path, ident, copy=True)
        libs.append(lib)
        lib.refs += 1
        return lib


def release(lib: LoadedLibrary) -> None:
    """One reference less; unload ``lib`` when nobody uses it and it is a
    copy or its file changed. Nothing at interpreter exit."""
    if sys.is_finalizing() or lib.unloaded:
        return
    with _lock:
        lib.refs -= 1
        if lib.refs > 0:
            return
        try:
            stale = lib.copy or _identity(lib.path) != lib.ident
        except OSError:         # the file is gone
            stale = True
        if stale and lib.unload():
            libs = _libs.get(lib.path, [])
            if lib in libs:
                libs.remove(lib)
            if not libs:
                _libs.pop(lib.path, None)


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
