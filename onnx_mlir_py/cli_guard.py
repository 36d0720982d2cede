"""How the command-line tools end: one line on stderr, never a traceback.

``onnx-mlir-py``, ``onnx-mlir-py verify`` and ``onnx-mlir-py profile`` run their work through
:func:`run_guarded`: a compiler error (``OnnxMlirError``) prints ``error: ...``
and gives status 1; a bug of ours prints one ``internal error`` line (the
traceback with ``--debug``); Ctrl-C prints ``interrupted`` and gives 130,
SIGTERM / SIGHUP print ``terminated`` and give 143 / 129 (128 + the signal),
after the same cleanup as any exception (temporary files and folders
removed, the compiler's tools killed: ``scratch``, ``tool_process``); a
closed stdout pipe (``| head``) ends quietly.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

from onnx_mlir_py.scratch import Terminated

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def terminate_as_exception() -> None:
    """SIGTERM / SIGHUP raise :class:`Terminated` (a ``KeyboardInterrupt``)
    in the main thread, so the way out runs every ``finally``; a signal the
    process ignores (``nohup``) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in TERMINATING_SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _raise_terminated)


def run_guarded(body: Callable[[], int], debug: bool, internal_status: int = 2) -> int:
    from onnx_mlir_py.errors import OnnxMlirError
    terminate_as_exception()
    try:
        return body()
    except OnnxMlirError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:      # Ctrl-C, or SIGTERM / SIGHUP (Terminated)
        signum = getattr(e, "signum", signal.SIGINT)
        print("interrupted" if signum == signal.SIGINT else "terminated", file=sys.stderr)
        return 128 + signum
    except BrokenPipeError:
        # the reader went away: no message, and no second error when Python
        # flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:  # noqa: BLE001 - a bug of ours: still one line, ask for a report
        if debug:
            raise
        from onnx_mlir_py.errors import environment_failure, is_machine_error
        if is_machine_error(e):     # a full disk, a read-only folder: not a bug
            print(f"error: {environment_failure(e, 'the machine failed the compile')}",
                  file=sys.stderr)
            return 1
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"internal error: {type(e).__name__}: {first} (rerun with --debug for the "
              "traceback, and please report it)", file=sys.stderr)
        return internal_status
