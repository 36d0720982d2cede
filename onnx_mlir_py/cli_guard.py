"""How the command-line tools end: one line on stderr, never a traceback.

``onnx-mlir-py``, ``onnx-mlir-py verify`` and ``onnx-mlir-py profile`` run their work through
:func:`run_guarded`: a compiler error (``OnnxMlirError``) prints ``error: ...``
and gives status 1; a bug of ours prints one ``internal error`` line (the
traceback with ``--debug``); Ctrl-C gives 130; a closed stdout pipe (``| head``)
ends quietly.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable


def run_guarded(body: Callable[[], int], debug: bool, internal_status: int = 2) -> int:
    from onnx_mlir_py.errors import OnnxMlirError
    try:
        return body()
    except OnnxMlirError as e:
        if debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away: no message, and no second error when Python
        # flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as e:  # noqa: BLE001 - a bug of ours: still one line, ask for a report
        if debug:
            raise
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"internal error: {type(e).__name__}: {first} (rerun with --debug for the "
              "traceback, and please report it)", file=sys.stderr)
        return internal_status
