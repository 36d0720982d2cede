"""What a failed tool (``llc``, ``opt``, ``gcc``, ...) means: a compile error
of the model (cached), or a failure of the machine (``EnvironmentFailure``,
never cached): killed by a signal from outside (the out-of-memory killer's
SIGKILL, a supervisor's SIGTERM), a full disk or quota, no memory. gcc
reports its own killed children (``ld terminated with signal 9``) in its
stderr and exits 1, so the stderr is read too.
"""
from __future__ import annotations

import signal

from onnx_mlir_py.errors import CompileError, EnvironmentFailure

# signals sent to a tool from outside it (a crash of the tool itself, SIGSEGV
# or SIGABRT, is a compile error of the model: the same input crashes again)
_EXTERNAL = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
             signal.SIGXCPU, signal.SIGXFSZ, signal.SIGPIPE}
# stderr text -> the cause it names
_CAUSES = (("No space left on device", "the disk is full"),
           ("Disk quota exceeded", "the disk quota is exceeded"),
           ("Read-only file system", "a read-only file system"),
           ("Cannot allocate memory", "out of memory"),
           ("out of memory", "out of memory"),
           ("Too many open files", "too many open files"),
           ("terminated with signal", "a tool it ran was killed"),
           ("Killed signal terminated program", "a tool it ran was killed"))


def _lines(stderr: bytes) -> list[str]:
    return [s.strip() for s in stderr.decode(errors="replace").splitlines() if s.strip()]


def tool_failure(name: str, returncode: int, stderr: bytes) -> CompileError:
    """The error for tool ``name`` ending with ``returncode`` and ``stderr``."""
    lines = _lines(stderr)
    if returncode < 0 and -returncode in _EXTERNAL:
        sig = signal.Signals(-returncode).name
        hint = " (the out-of-memory killer or a supervisor)" if sig == "SIGKILL" else ""
        last = f": {lines[-1][:300]}" if lines else ""
        return EnvironmentFailure(f"{name} was killed by {sig}{hint}; not cached, retry "
                                  f"when the machine has recovered{last}")
    for line in lines:
        for text, cause in _CAUSES:
            if text.lower() in line.lower():
                return EnvironmentFailure(f"{name} failed: {cause} ({line[:300]}); not cached, "
                                          "retry when the cause is gone")
    err = stderr.decode(errors="replace").strip()
    if len(err) > 4000:
        err = err[:2000] + "\n...\n" + err[-2000:]
    return CompileError(f"{name} failed (exit {returncode}): {err}")
