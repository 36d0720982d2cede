"""The corpus tests' crash-isolated child process: one per test module,
started by the first test that asks for it, closed after the module."""
from __future__ import annotations

import pytest

from onnx_mlir_py.backend.isolate import ChildWorker


@pytest.fixture(scope="module")
def corpus_child():
    worker = ChildWorker(max_calls=200)
    yield worker
    worker.close()
