"""A one-line progress display on stderr for long compiles.

In a terminal, ``onnx-mlir-py`` (and ``verify``) redraw one line on stderr
as the compile goes through its phases::

    [onnx-mlir-py  12.4 s] lower-to-linalg 480/1210 ops (1.3 s)

The phases are the stages of :class:`~onnx_mlir_py.timings.Timings` (a
:class:`Progress` is its ``listener``); per-op passes report a count with
:func:`count`. The line is drawn by a small child process
(``_progress_painter.py``) that redraws it every quarter second, so both
clocks keep moving while the compiler sits in one long MLIR call (which
holds the Python interpreter: up to 6 s at a time on GPT-2 small). The
line is erased when the compile ends; warnings printed meanwhile go
through :func:`write_line` so they land on their own line. Nothing is
drawn when stderr is not a terminal (or ``TERM=dumb``); ``-q`` turns it off.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager

_ACTIVE: list["Progress"] = []       # the display on screen, if any
_PAINTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_progress_painter.py")


def count(done: int, total: int, unit: str = "ops") -> None:
    """A per-op pass reports how far it is (cheap when nothing is shown)."""
    if _ACTIVE:
        _ACTIVE[-1].count(done, total, unit)


def write_line(text: str, stream=None) -> None:
    """Print ``text`` as its own line on stderr, above the progress line if one is shown."""
    if _ACTIVE and _ACTIVE[-1].alive:
        _ACTIVE[-1].write_line(text)
    else:
        print(text, file=stream or sys.stderr)


class Progress:
    """Tells the painter what to show; ``enter``/``leave`` are called by
    ``Timings.phase``. Counts are sent at most every ``min_interval`` s
    (and always the first and the last of a phase)."""

    def __init__(self, stream, tick: float = 0.25, min_interval: float = 0.1):
        self.min_interval = min_interval
        self._count: tuple[int, int, str] | None = None
        self._sent = 0.0
        stream.flush()
        self._proc = subprocess.Popen([sys.executable, "-S", _PAINTER, str(tick)],
                                      stdin=subprocess.PIPE, stdout=stream.fileno(),
                                      stderr=subprocess.DEVNULL, close_fds=True)
        self.alive = True

    def _send(self, *msg) -> None:
        if not self.alive:
            return
        try:
            self._proc.stdin.write(json.dumps(msg).encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self.alive = False
        self._sent = time.monotonic()

    def enter(self, name: str) -> None:
        self._count = None
        self._send("P", time.monotonic(), name)

    def leave(self, name: str) -> None:
        pass           # the line shows the last phase until the next one starts

    def count(self, done: int, total: int, unit: str) -> None:
        first = self._count is None or done == total
        self._count = (done, total, unit)
        if first or time.monotonic() - self._sent >= self.min_interval:
            self._send("C", done, total, unit)

    def write_line(self, text: str) -> None:
        self._send("W", text)

    def close(self) -> None:
        """Erase the line; returns once the painter is gone (so what is printed next
        starts on a clean line)."""
        try:
            self._proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self.alive = False


def wanted(stream) -> bool:
    """Show progress on ``stream``: a terminal, not ``TERM=dumb``."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


@contextmanager
def show_progress(timings, enabled: bool | None = None, stream=None):
    """Show the progress of the phases ``timings`` records, in the ``with``
    block; ``enabled=None``: if stderr is a terminal (see :func:`wanted`).
    ``stream`` must have a file descriptor (the painter writes to it)."""
    stream = sys.stderr if stream is None else stream
    if not (wanted(stream) if enabled is None else enabled):
        yield None
        return
    p = Progress(stream)
    timings.listener = p
    _ACTIVE.append(p)
    try:
        yield p
    finally:
        _ACTIVE.remove(p)
        timings.listener = None
        p.close()
