"""Temporary files and folders that a killed process cannot leave for good.

Every temporary of the compiler and the runtime is named after the process
that made it: ``<prefix><pid>-<pid namespace>-<random>`` in the temp
directory (``$TMPDIR``), or ``<file>.tmp<pid>`` beside an output. The owner
removes it on every way out, an exception, Ctrl-C (``KeyboardInterrupt``)
or SIGTERM (the command lines and the compile worker turn SIGTERM into
:class:`Terminated`) included. A process killed with SIGKILL runs no code,
so what it leaves is collected by the next one instead: :func:`temp_dir`
and :func:`temp_file` first remove (once per process) the temporaries of
this user whose process is gone (same pid namespace, pid not running), and
:func:`output_temp` the ``<file>.tmp<pid>`` of dead pids beside its output.

    omp-<pid>-<ns>-*           codegen's work folder: model.o, entry.c, the
                               weights (.bin), the C compiler's temporaries
    omp-reload-<pid>-<ns>-*    runtime: a private copy of a replaced library
    onnx-mlir-py-worker-<pid>-<ns>-*.log   the compile worker's stderr
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

WORK_PREFIX = "omp-"
RELOAD_PREFIX = "omp-reload-"
WORKER_LOG_PREFIX = "onnx-mlir-py-worker-"
_NAME = re.compile(r"^(omp-reload-|omp-|onnx-mlir-py-worker-)(\d+)-(\d+)-")
_swept: set[str] = set()            # temp directories already swept by this process
_lock = threading.Lock()
_current = threading.local()        # the work folder of this thread's codegen


class Terminated(KeyboardInterrupt):
    """SIGTERM / SIGHUP as an exception, so ``finally`` blocks and
    ``except KeyboardInterrupt`` cleanups run as for Ctrl-C."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _pid_namespace() -> str:
    try:
        link = os.readlink("/proc/self/ns/pid")          # "pid:[4026531836]"
        return "".join(c for c in link if c.isdigit()) or "0"
    except OSError:
        return "0"


def _tag() -> str:
    return f"{os.getpid()}-{_pid_namespace()}-"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:          # another user's process: alive
        return True
    return True


def sweep_stale(directory: str | os.PathLike | None = None) -> list[str]:
    """Remove the temporaries (module docstring) in ``directory`` (default
    the temp directory) left by dead processes of this user in this pid
    namespace; returns their paths."""
    d = os.fspath(directory or tempfile.gettempdir())
    ns, uid, removed = _pid_namespace(), os.getuid(), []
    try:
        names = os.listdir(d)
    except OSError:
        return removed
    for name in names:
        m = _NAME.match(name)
        if m is None or m.group(3) != ns or pid_alive(int(m.group(2))):
            continue
        path = os.path.join(d, name)
        try:
            st = os.lstat(path)
            if st.st_uid != uid:
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def _sweep_once() -> None:
    d = tempfile.gettempdir()
    with _lock:
        if d in _swept:
            return
        _swept.add(d)
    sweep_stale(d)


def make_temp_dir(prefix: str = WORK_PREFIX) -> Path:
    """A new folder ``<prefix><pid>-<ns>-*`` in the temp directory (the
    caller removes it)."""
    _sweep_once()
    return Path(tempfile.mkdtemp(prefix=prefix + _tag()))


def temp_file(prefix: str, suffix: str = "") -> str:
    """A new empty file ``<prefix><pid>-<ns>-*<suffix>`` in the temp directory."""
    _sweep_once()
    fd, path = tempfile.mkstemp(prefix=prefix + _tag(), suffix=suffix)
    os.close(fd)
    return path


@contextmanager
def temp_dir(keep: str | os.PathLike | None = None):
    """A work folder (:func:`make_temp_dir`) removed on every way out, or
    ``keep`` (kept: for debugging). While it is open it is this thread's
    :func:`current_dir`: the tools' own temporaries go there."""
    tmp = Path(keep) if keep else make_temp_dir()
    tmp.mkdir(parents=True, exist_ok=True)
    outer = getattr(_current, "dir", None)
    _current.dir = tmp
    try:
        yield tmp
    finally:
        _current.dir = outer
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


def current_dir() -> Path | None:
    """The innermost open :func:`temp_dir` of this thread, or None."""
    return getattr(_current, "dir", None)


@contextmanager
def output_temp(path: str | os.PathLike):
    """``<path>.tmp<pid>`` to write ``path``'s new content into (then
    ``os.replace`` it over ``path``); removed on every way out if still
    there. Stale ones of dead pids beside ``path`` go first."""
    path = Path(path)
    stem = path.name + ".tmp"
    try:
        for other in path.parent.iterdir():
            rest = other.name[len(stem):]
            if other.name.startswith(stem) and rest.isdigit() and \
                    int(rest) != os.getpid() and not pid_alive(int(rest)):
                try:
                    other.unlink()
                except OSError:
                    pass
    except OSError:
        pass
    tmp = path.with_name(stem + str(os.getpid()))
    try:
        yield tmp
    finally:
        try:
            tmp.unlink()
        except OSError:
            pass
