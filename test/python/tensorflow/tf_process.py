"""A fresh Python process for the tests of what gets loaded, and in which
order (TensorFlow, MLIR, onnx), and the example model such a process can
compile."""
from __future__ import annotations

import os
import subprocess
import sys

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples",
                       "mnist_small.onnx")


def run_code(code: str, timeout: float) -> subprocess.CompletedProcess:
    """``python -c code`` in a new process; its output captured as text."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
