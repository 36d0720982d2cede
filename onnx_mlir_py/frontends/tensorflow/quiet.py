"""TensorFlow's log noise kept off the user's terminal unless ``-v``.

TensorFlow's C++ code writes to fd 2 before any Python logging is set up
(``oneDNN custom operations are on``, ``cpu_feature_guard``), absl and
tf2onnx log through Python, Keras warns. :func:`quiet` sets
``TF_CPP_MIN_LOG_LEVEL`` (unless the user set it), sends fds 1 and 2 to a
temporary file for the duration of the block, silences the Python loggers
and warnings, and restores it all after. With ``verbose`` it does nothing.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import warnings

LOGGERS = ("tensorflow", "tf2onnx", "absl", "keras", "h5py")


@contextlib.contextmanager
def quiet(verbose: bool = False):
    if verbose:
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    loggers = [logging.getLogger(n) for n in LOGGERS]
    saved = [(lg, lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
        lg.propagate = False
    for s in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            s.flush()
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fds = [(fd, os.dup(fd)) for fd in (1, 2)]
        try:
            for fd, _ in fds:
                os.dup2(sink.fileno(), fd)
            yield
        finally:
            for s in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    s.flush()
            for fd, copy in fds:
                os.dup2(copy, fd)
                os.close(copy)
            for lg, level, prop in saved:
                lg.setLevel(level)
                lg.propagate = prop
