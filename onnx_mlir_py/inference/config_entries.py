"""``SessionOptions.add_session_config_entry``: the keys that mean something
for a compiled model, and a one-time warning for the others.

Honoured:

* ``session.intra_op.allow_spinning``: ``"1"`` (onnxruntime's default) keeps
  the pool's idle spin (its workers spin ``ONNX_MLIR_PY_SPIN_US``, default
  200 us, after a run before they sleep); anything else (``"0"``) makes them
  sleep as soon as a run ends. Between the parallel loops of one run the
  workers still spin (yielding the core every ~50 us): that wait is part of
  the run's latency. The setting belongs to the library's pool, which all
  sessions on the same compiled model in a process share (as the thread
  count does); a library without a pool (single-threaded code) has nothing
  to set.

* ``session.onnx_mlir_py.precision``: ``"fp32"`` (the default) or
  ``"bf16"``: the model's f32 Conv / MatMul / Gemm compute with bf16 inputs
  and f32 accumulation (``onnx-mlir-py --precision bf16``; a compile option,
  so part of the compile cache key); on a machine without AVX512-BF16 or
  AMX-BF16 the session fails to compile with one line saying so.

Every other key is stored (``get_session_config_entry`` returns it) and
ignored, with a :class:`ConfigEntryWarning` the first time the process sees
the key: onnxruntime's graph-transformer, allocator, EP and thread-affinity
keys have no counterpart in a compiled library (its pool places its own
threads).
"""
from __future__ import annotations

import threading
import warnings

from onnx_mlir_py.errors import OnnxMlirWarning

ALLOW_SPINNING = "session.intra_op.allow_spinning"
PRECISION = "session.onnx_mlir_py.precision"
HONOURED = (ALLOW_SPINNING, PRECISION)

_warned: set[str] = set()
_lock = threading.Lock()


class ConfigEntryWarning(OnnxMlirWarning):
    """A session config entry that is accepted and has no effect here."""


def check_entry(key, value) -> None:
    """TypeError unless both are str; warn (once per key) for a key that
    is ignored."""
    if not isinstance(key, str) or not isinstance(value, str):
        raise TypeError(f"add_session_config_entry takes (str, str), got "
                        f"({type(key).__name__}, {type(value).__name__})")
    if key == PRECISION:
        from onnx_mlir_py.options import PRECISIONS
        if value not in PRECISIONS:
            raise ValueError(f"session config entry '{PRECISION}' must be one of "
                             f"{', '.join(PRECISIONS)}, got {value!r}")
    if key in HONOURED:
        return
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(ConfigEntryWarning(f"session config entry '{key}' is accepted and ignored: "
                                     f"onnx-mlir-py honours only {list(HONOURED)}"),
                  stacklevel=3)


def spin_us(config: dict[str, str]) -> int | None:
    """The pool's idle spin for ``config``: 0 (no spin), -1 (the default),
    None (not set)."""
    if ALLOW_SPINNING not in config:
        return None
    return -1 if config[ALLOW_SPINNING] == "1" else 0


def precision(config: dict[str, str]) -> str:
    """The compile precision ``config`` asks for (``"fp32"`` by default)."""
    return config.get(PRECISION, "fp32")
