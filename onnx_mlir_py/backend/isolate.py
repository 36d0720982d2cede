"""Run functions in a child process, so an MLIR abort cannot kill the caller.

The MLIR wheels are an assertions build: API misuse aborts the process. A
``ChildWorker`` is one long-lived child (``multiprocessing`` spawn: no forked
MLIR state) that runs ``fn(*args)`` calls sent over a pipe. Errors raised in
the child come back as dicts (``errors.error_to_dict``); when the child dies
during a call (signal, ``os._exit``) or overruns its time limit, the call
reports a crash / timeout with the last line the child wrote to stderr (an
MLIR assertion message, typically), and the next call starts a fresh child.

Interrupts: the child ignores SIGINT (Ctrl-C at a terminal reaches the whole
foreground process group; the caller decides) and turns SIGTERM into
``scratch.Terminated``, so its call unwinds: the cache placeholder, the
``<out>.tmp<pid>`` file and the ``omp-*`` work folder are removed and the
tools it runs are killed (``tool_process``). A caller interrupted while it
waits for a call (``KeyboardInterrupt``, SIGTERM as ``Terminated``, any
exception) stops the child that way before the exception goes on (its
reply would otherwise answer the next call), as does a timeout (SIGKILL
only if it does not end within a few seconds). When the caller's process
dies without a word (SIGKILL), the child notices within a fraction of a
second (its parent pid changes) and ends the same way, removing its log.
"""
from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time

from onnx_mlir_py.scratch import WORKER_LOG_PREFIX, Terminated, temp_file

_CTX = mp.get_context("spawn")


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def exit_description(code: int | None) -> str:
    if code is None:
        return "killed"
    return _signal_name(code) if code < 0 else f"exit status {code}"


@contextlib.contextmanager
def _main_hidden():
    """Start a child without the caller's ``__main__``: spawn would re-run
    the caller's script in the child (by path), which runs its top level
    again, a script without an ``if __name__ == "__main__"`` guard (one
    written for onnxruntime's InferenceSession) would start the compiler
    child again and fail. The child only runs onnx_mlir_py functions."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


# seconds between two looks of the child at its parent; and how long it
# waits for its call to unwind after the parent died before it kills itself
PARENT_POLL_S = 0.2
UNWIND_GRACE_S = 10.0
# how long a stopped child may take to unwind (SIGTERM) before SIGKILL
STOP_GRACE_S = 3.0


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def _watch_parent(parent: int) -> None:
    """(A thread of the child) SIGTERM to itself once the parent is gone,
    SIGKILL if the call has not unwound ``UNWIND_GRACE_S`` later (stuck in
    native code: the tools still die, with PR_SET_PDEATHSIG)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(UNWIND_GRACE_S)
    os.kill(os.getpid(), signal.SIGKILL)


def _child_main(conn, log_path: str, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _raise_terminated)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                     name="watch-parent").start()
    # fd 2 -> a log file the parent reads after a crash (for the abort message).
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        _serve(conn)
    except Terminated:      # the call unwound (its finally blocks ran)
        pass
    finally:
        # An orderly end (asked, terminated, the parent gone or exiting): the
        # log goes. After a crash it stays for the parent to read (and remove).
        try:
            os.unlink(log_path)
        except OSError:
            pass


def _serve(conn) -> None:
    from onnx_mlir_py.backend.errors import error_to_dict
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fn, args = msg
        os.ftruncate(2, 0)
        os.lseek(2, 0, os.SEEK_SET)
        try:
            reply = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - every error goes back to the caller
            reply = ("error", error_to_dict(e))
        conn.send(reply)


def _last_line(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 8192))
            lines = [s.strip() for s in f.read().decode(errors="replace").splitlines()
                     if s.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


class ChildWorker:
    """One child process running calls one at a time.

    ``call(fn, args, timeout)`` -> ``("ok", value)`` | ``("error", dict)`` |
    ``("crash", description)`` | ``("timeout", description)``. ``fn`` must be
    a module-level function (it is pickled by reference). The child is
    restarted after ``max_calls`` calls to bound memory growth.
    """

    def __init__(self, max_calls: int = 100):
        self.max_calls = max_calls
        self._proc = None
        self._conn = None
        self._calls = 0
        self._lock = threading.Lock()
        self._log = None
        self.busy_since: float | None = None

    # -- process management ---------------------------------------------------
    def _start(self) -> None:
        self._log = temp_file(WORKER_LOG_PREFIX, ".log")
        parent, child = _CTX.Pipe()
        self._proc = _CTX.Process(target=_child_main, args=(child, self._log, os.getpid()),
                                  daemon=True)
        with _main_hidden():
            self._proc.start()
        child.close()
        self._conn = parent
        self._calls = 0

    def _stop(self, kill: bool = False, terminate: bool = False) -> None:
        """End the child: ask it (idle), ``terminate`` (SIGTERM: a call in
        flight unwinds and cleans up), or ``kill`` (SIGKILL, it is dead or
        stuck); SIGKILL after ``STOP_GRACE_S`` in any case."""
        if self._proc is None:
            return
        try:
            if kill:
                self._proc.kill()
            elif terminate:
                self._proc.terminate()
            else:
                try:
                    self._conn.send(None)
                except OSError:
                    pass
            self._proc.join(STOP_GRACE_S)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        finally:
            self._conn.close()
            self._proc = self._conn = None
            if self._log:
                try:
                    os.unlink(self._log)
                except OSError:
                    pass
                self._log = None

    def close(self) -> None:
        with self._lock:
            self._stop()

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.is_alive()

    # -- asynchronous use (a pool waits on many workers) ------------------------
    def send(self, fn, args: tuple) -> None:
        if self._proc is not None and (self._calls >= self.max_calls or
                                       not self._proc.is_alive()):
            self._stop(kill=not self._proc.is_alive())
        if self._proc is None:
            self._start()
        self._calls += 1
        self.busy_since = time.monotonic()
        self._conn.send((fn, args))

    def waitables(self) -> list:
        return [self._conn, self._proc.sentinel]

    def receive(self, block: bool = True):
        """The reply of the call in flight (after ``send``)."""
        try:
            if block or self._conn.poll():
                reply = self._conn.recv()
                self.busy_since = None
                return reply
        except (EOFError, OSError):
            pass
        # The pipe closed or the process ended without replying: a crash.
        self._proc.join(5)
        desc = exit_description(self._proc.exitcode)
        last = _last_line(self._log)
        self._stop(kill=True)
        self.busy_since = None
        return ("crash", desc + (f": {last}" if last else ""))

    def kill_timeout(self, timeout: float):
        last = _last_line(self._log)
        self._stop(terminate=True)
        self.busy_since = None
        return ("timeout", f"no result after {timeout:g} s" + (f" ({last})" if last else ""))

    # -- synchronous use -------------------------------------------------------
    def call(self, fn, args: tuple = (), timeout: float | None = None):
        with self._lock:
            self.send(fn, args)
            from multiprocessing.connection import wait
            try:
                ready = wait(self.waitables(), timeout)
            except BaseException:       # Ctrl-C, SIGTERM (Terminated), ...: end the call
                self._stop(terminate=True)
                self.busy_since = None
                raise
            if not ready:
                return self.kill_timeout(timeout)
            return self.receive()


_shared: ChildWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> ChildWorker:
    """The process-wide compiler child used by the backend (started lazily)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ChildWorker()
        return _shared
