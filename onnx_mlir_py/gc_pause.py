"""Fewer cyclic garbage collections while a compile runs (#29).

A compile makes and drops hundreds of thousands of small Python objects
(the bindings' handles on MLIR operations, values and attributes), almost
all freed by their reference counts, never in a cycle. With CPython's
default thresholds (700 new objects) that is ~200 collections per
ResNet-50 compile, 53-78 ms of the compile's main thread, half of it in the
full (generation 2) ones that walk every object of the process.

:func:`fewer_collections` raises the first threshold for the compile's
duration (to :data:`THRESHOLD0`; ResNet-50: 6 collections, ~29 ms) and puts
back the caller's thresholds afterwards: a program that embeds the compiler
keeps its own. Nothing is left uncollected: the collector still runs, less
often, and the garbage of a compile is freed by its reference counts as
before. Nested and concurrent compiles share one pause: the thresholds come
back when the last one ends. A caller that set a larger threshold (or
disabled the collector) is left as it is.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

# new objects between two collections of the youngest generation
THRESHOLD0 = 20000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None


@contextmanager
def fewer_collections():
    """Within the block, the collector's first threshold is at least
    :data:`THRESHOLD0` (see the module docstring)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < THRESHOLD0:
                gc.set_threshold(THRESHOLD0, *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                # only ours is undone: a threshold the program set meanwhile stays
                if _saved is not None and gc.get_threshold()[0] == THRESHOLD0 \
                        and _saved[0] != THRESHOLD0:
                    gc.set_threshold(*_saved)
                _saved = None
