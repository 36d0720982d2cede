"""Pause points for the fault tests (test/python/faults): a test sets

    ONNX_MLIR_PY_TEST_PAUSE=<point>          a phase name ("optimize (tensor -O3)",
                                             "codegen: link", ...; timings.py), a
                                             tool ("llc", "opt", "gcc": tool_process.py)
                                             or "linked" (codegen/link.py: the
                                             library written to <out>.tmp<pid>)
    ONNX_MLIR_PY_TEST_PAUSE_FILE=<path>

and the compiler, on reaching the point, writes ``<pid> <tool pid>`` to the
file and waits there until a signal ends it, so the test can signal it at
a known step of a compile. A tool paused this way is running: it waits for
its input (llc, opt, mlir-translate) or is stopped (SIGSTOP, gcc). Unset
(always, outside the tests), :func:`pause_point` is one dict lookup.
"""
from __future__ import annotations

import os
import time

PAUSE_ENV = "ONNX_MLIR_PY_TEST_PAUSE"
PAUSE_FILE_ENV = "ONNX_MLIR_PY_TEST_PAUSE_FILE"


def pause_point(name: str, tool_pid: int | None = None) -> None:
    if os.environ.get(PAUSE_ENV) != name:
        return
    path = os.environ[PAUSE_FILE_ENV]
    with open(path + ".part", "w") as f:
        f.write(f"{os.getpid()} {tool_pid or 0}\n")
    os.replace(path + ".part", path)
    while True:
        time.sleep(0.05)
