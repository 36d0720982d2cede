"""The tool launcher: start llc / opt / gcc with vfork instead of fork (#29).

A tool must die with the compiler (``tool_process``): its own process group
and ``PR_SET_PDEATHSIG``. Python can only set the latter in a pre-exec step,
and a pre-exec step makes ``subprocess`` fork the whole compiler: with a
model's weights and MLIR context in memory that took 30-120 ms per tool
(ResNet-50: 21 tools, 1.4 s of its compile, and the next parallel ``opt`` /
``llc`` waits for each fork). The launcher (``tool_launch.c``) sets the
signal itself and execs the tool, so the compiler starts it with
``process_group=0`` and no pre-exec step, which ``subprocess`` does with
vfork (~1 ms).

It is built once with gcc into the compile cache's folder
(``<cache>/tools/<key>/``, keyed by its source and the machine), under the
cache's rules (``backend/cache_files.py``: a private folder, written
atomically, checked against its recorded sha256 before a process first uses
it; missing, corrupt or foreign: built again). Where it cannot be built or
run (not Linux, Python < 3.11, no gcc, an unusable cache, a ``noexec``
mount) the tools start as before, with the pre-exec step: the launcher
only saves time, it never fails a compile. A new cache's first compile
has a gcc of its own build it beside the runtime's prefetch chains, all
started without it at the compile's start (:func:`build_ahead`), and takes it
from there when it first starts a tool.
"""
from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

from onnx_mlir_py.errors import CompileError, UnsafeCacheError

SOURCE = Path(__file__).with_name("tool_launch.c")
NAME = "om-tool-launch"
DISABLE_ENV = "ONNX_MLIR_PY_NO_TOOL_LAUNCHER"      # tests: the pre-exec path

_state: dict[str, str | None] = {}
# a build started elsewhere (:func:`build_ahead`): (process, built file, its done mark)
_ahead: tuple | None = None


def usable_here() -> bool:
    return sys.platform.startswith("linux") and sys.version_info >= (3, 11) \
        and not os.environ.get(DISABLE_ENV)


def launcher(build) -> str | None:
    """Path of the verified launcher, built on this process's first call
    with ``build(args)`` (runs gcc: the pre-exec path, so no recursion);
    None when there is none (see the module docstring)."""
    if "path" not in _state:
        _state["path"] = _find_or_build(build) if usable_here() else None
    return _state["path"]


def disable() -> None:
    """No launcher for the rest of this process (it failed to start)."""
    _state["path"] = None


def wanted() -> bool:
    """Whether this process has no launcher yet and may build one (the
    cache's is missing or not verified): :func:`build_ahead`'s question."""
    if "path" in _state or _ahead is not None or not usable_here():
        return False
    from onnx_mlir_py.backend.cache_files import elf_verified
    try:
        return not elf_verified(_cache_path())
    except (OSError, UnsafeCacheError):
        return False


def build_command(out: Path) -> list[str]:
    """The gcc command that builds the launcher into ``out``."""
    from onnx_mlir_py.codegen.tools import tool
    return [tool("gcc"), "-O2", "-o", str(out), str(SOURCE)]


def build_ahead(proc, built: Path, done: Path) -> None:
    """The launcher is being built by ``proc`` (a process of the caller's,
    e.g. the runtime's prefetch, started without the launcher) into
    ``built``, which ``done`` marks finished: the first :func:`launcher`
    call takes it from there (waiting for it while ``proc`` runs) instead
    of running gcc itself on the compile's thread (~60 ms of a new cache's
    first compile, before its import; #29)."""
    global _ahead
    _ahead = (proc, built, done)


def _take_ahead() -> Path | None:
    """The file :func:`build_ahead` announced, once built well; else None."""
    global _ahead
    if _ahead is None:
        return None
    from onnx_mlir_py.tool_process import marked_output
    proc, built, done = _ahead
    _ahead = None
    return marked_output(proc, built, done)


def tools_folder(key: str) -> Path:
    """``<cache>/tools/<key>/``, created private: the folder of a helper the
    compiler builds for itself (this launcher, native_walk.py's library);
    OSError / UnsafeCacheError when the cache cannot be used."""
    from onnx_mlir_py.backend.cache import cache_dir
    from onnx_mlir_py.backend.cache_files import private_dir
    return private_dir(private_dir(private_dir(cache_dir()) / "tools") / key)


def _cache_path() -> Path:
    """The launcher's path in the cache (folders created private)."""
    key = hashlib.sha256(SOURCE.read_bytes() + platform.machine().encode()).hexdigest()[:24]
    return tools_folder(key) / NAME


def _find_or_build(build) -> str | None:
    from onnx_mlir_py.scratch import temp_dir
    from onnx_mlir_py.backend.cache_files import elf_verified, store_verified, unlink_verified
    try:
        exe = _cache_path()
        if elf_verified(exe):
            return str(exe)
        unlink_verified(exe)
        built = _take_ahead()
        if built is not None:           # built beside the runtime's prefetch chains
            store_verified(exe, built.read_bytes(), mode=0o700)
            return str(exe)
        with temp_dir() as tmp:     # pid-named: a killed build's is collected later
            built = tmp / NAME
            r = build(build_command(built))
            if r.returncode != 0 or not built.is_file():
                return None
            store_verified(exe, built.read_bytes(), mode=0o700)
        return str(exe)
    except (OSError, UnsafeCacheError, CompileError, subprocess.SubprocessError):
        return None
