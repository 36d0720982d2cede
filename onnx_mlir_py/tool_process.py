"""Run a tool (llc, opt, mlir-translate, gcc) as a child that cannot outlive us.

- The child is in its own process group: Ctrl-C at a terminal reaches only
  the compiler, which decides (a tool killed by the terminal's SIGINT would
  look like a failed tool); on any way out of :func:`run_tool` other than
  its normal end (an exception, ``KeyboardInterrupt``, SIGTERM as
  ``scratch.Terminated``) the whole group is killed (gcc's cc1/as/ld too)
  and reaped before the exception goes on.
- It gets ``PR_SET_PDEATHSIG = SIGKILL`` (Linux): if the compiler dies
  without running any code (SIGKILL, a supervisor's timeout), the kernel
  kills the tool at once instead of leaving it running as an orphan.
  Its own children (gcc's) do not inherit it; they end on their own soon
  after, and their temporaries are in the work folder (below).
- It starts through the launcher of :mod:`.tool_launcher` when there is
  one: the launcher sets ``PR_SET_PDEATHSIG`` and execs the tool, so
  ``subprocess`` can use vfork (no Python pre-exec step), ~1 ms instead of
  a 30-120 ms fork of a compiler holding a model (#29).
- ``TMPDIR`` is the current work folder (``scratch.current_dir``), so the
  tools' temporaries (gcc's ``cc*.s`` / ``cc*.o``) are removed with it or,
  after a SIGKILL, collected with it by a later run (``scratch``).
"""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import signal
import subprocess
import sys

from onnx_mlir_py import tool_launcher

from onnx_mlir_py.scratch import current_dir
from onnx_mlir_py.test_hooks import PAUSE_ENV, pause_point

# cores codegen (opt / llc over the split module, MLIR's per-function passes) may use
JOBS_ENV = "ONNX_MLIR_PY_CODEGEN_JOBS"


def split_jobs() -> int:
    """Cores codegen may use: the CPUs this process may run on, or
    ``$ONNX_MLIR_PY_CODEGEN_JOBS``."""
    env = os.environ.get(JOBS_ENV)
    if env is not None and env.strip().isdigit():
        return max(1, int(env))
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1

_PR_SET_PDEATHSIG = 1


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong,
                                             ctypes.c_ulong, ctypes.c_ulong]
    return fn


_PRCTL = _prctl()          # looked up before any fork: the child only calls it


def _child_setup(parent: int):
    """The child's pre-exec step: a process group of its own; SIGKILL when
    the parent thread dies; if the parent is already gone (it died between
    fork and here), exit at once."""
    def setup() -> None:
        os.setpgid(0, 0)
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:
                os._exit(128 + signal.SIGKILL)
    return setup


def spawn_quiet(args: list[str], tmpdir=None, launch: bool = True) -> subprocess.Popen:
    """Start ``args`` in the background (no input, output discarded) with
    the guarantees of the module docstring; the caller waits for it or
    kills it (:func:`kill_group`) on every way out. ``tmpdir``: its
    ``TMPDIR`` (a folder the caller removes: what a killed tool leaves there,
    gcc's ``cc*.s``, goes with it), else the current work folder's.
    ``launch=False``: without the launcher (the pre-exec step; it is built
    meanwhile by this process, :func:`.tool_launcher.build_ahead`)."""
    env = _tool_env() if tmpdir is None else dict(os.environ, TMPDIR=str(tmpdir))
    return _spawn(args, launch, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL, env=env)


def marked_output(p: subprocess.Popen, out, mark):
    """``out`` once the background ``p`` has written ``mark`` (the sign that
    ``out`` was made well: a script's last step), waiting while ``p`` runs;
    None when ``p`` ended without it."""
    import time
    while not mark.exists() and p.poll() is None:
        time.sleep(0.002)
    return out if mark.exists() and out.is_file() else None


def kill_group(p: subprocess.Popen) -> None:
    """Kill ``p``'s process group (if still running) and reap it."""
    if p.poll() is None:
        _kill_group(p)


def _kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:         # gone, or not yet the leader of its group (before
        try:                # its setpgid): the child itself, so that the wait ends
            p.kill()
        except OSError:
            pass
    p.wait()


def _tool_env() -> dict | None:
    """The tools' environment: ``TMPDIR`` is the current work folder, if any."""
    work = current_dir()
    return None if work is None else dict(os.environ, TMPDIR=str(work))


def _executable(name: str) -> str:
    """``name`` as the path the launcher execs; the OSError ``Popen`` would
    raise when it cannot be run."""
    path = name if os.sep in name else shutil.which(name)
    if path is None or not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
    if not os.access(path, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
    return path


def _build_launcher(args: list[str]) -> subprocess.CompletedProcess:
    return run_tool(args, launch=False)


def _spawn(args: list[str], launch: bool = True, **kw) -> subprocess.Popen:
    """``Popen(args, **kw)`` in a process group of its own that dies with
    this thread: through the launcher (vfork) when there is one, else with
    the pre-exec step (fork)."""
    exe = tool_launcher.launcher(_build_launcher) if launch else None
    if exe is not None:
        path = _executable(args[0])
        try:
            return subprocess.Popen([exe, str(os.getpid()), path, *args[1:]],
                                    process_group=0, **kw)
        except OSError:             # e.g. a noexec cache folder: as before, from now on
            tool_launcher.disable()
    return subprocess.Popen(args, preexec_fn=_child_setup(os.getpid()), **kw)


def run_tool(args: list[str], stdin: bytes | None = None, *,
             launch: bool = True) -> subprocess.CompletedProcess:
    """``subprocess.run(args, input=stdin, capture_output=True)`` with the
    guarantees of the module docstring. OSError when it cannot start.
    ``launch=False``: without the launcher (it is being built)."""
    env = _tool_env()
    p = _spawn(args, launch, stdin=subprocess.PIPE if stdin is not None else
               subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        _test_pause(args, p)
        out, err = p.communicate(stdin)
    except BaseException:
        _kill_group(p)
        raise
    return subprocess.CompletedProcess(args, p.returncode, out, err)


def _test_pause(args: list[str], p: subprocess.Popen) -> None:
    """Test hook (``onnx_mlir_py.test_hooks``): pause with this tool running."""
    name = os.path.basename(args[0])
    if os.environ.get(PAUSE_ENV) != name:
        return
    if p.stdin is None:
        os.kill(p.pid, signal.SIGSTOP)            # no input to hold back: stop it
    pause_point(name, p.pid)


def run_tools(commands: list[list[str]], jobs: int) -> list[subprocess.CompletedProcess]:
    """Run ``commands`` (tools that read and write files: no stdin, stdout
    discarded), at most ``jobs`` at a time, each with the guarantees of
    :func:`run_tool` (own group, PDEATHSIG, ``TMPDIR``); results in the
    order given (stdout empty, stderr captured). On any way out other than
    every command's end (an exception, an interrupt) every running group
    is killed and reaped first. The caller checks the return codes."""
    import tempfile
    import time
    env = _tool_env()
    work = current_dir()
    results: list[subprocess.CompletedProcess | None] = [None] * len(commands)
    todo = list(enumerate(commands))
    running: list[tuple[int, subprocess.Popen, object]] = []
    try:
        while todo or running:
            while todo and len(running) < max(1, jobs):
                i, args = todo.pop(0)
                err = tempfile.TemporaryFile(dir=str(work) if work is not None else None)
                p = _spawn(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=err, env=env)
                running.append((i, p, err))
                _test_pause(args, p)
            done = [r for r in running if r[1].poll() is not None]
            if not done:
                time.sleep(0.005)
                continue
            for r in done:
                i, p, err = r
                running.remove(r)
                err.seek(0)
                results[i] = subprocess.CompletedProcess(p.args, p.returncode, b"", err.read())
                err.close()
    except BaseException:
        for _i, p, err in running:
            _kill_group(p)
            err.close()
        raise
    return results  # type: ignore[return-value]
