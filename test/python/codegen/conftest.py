"""Helpers for the backend tests: compile MLIR text to a .so and load it."""
from __future__ import annotations

import time

import mlir.ir as ir
import pytest

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.timings import Timings


class Compiled:
    def __init__(self, path, seconds, timings):
        self.path = path
        self.seconds = seconds
        self.timings = timings      # seconds per codegen stage
        self.session = ExecutionSession(path)


@pytest.fixture(scope="module")
def compile_mlir(tmp_path_factory):
    """``compile_mlir(text, name, **kw) -> Compiled`` (a fresh context each)."""
    root = tmp_path_factory.mktemp("so")

    def build(text: str, name: str, patch=None, **kw) -> Compiled:
        with ir.Context():
            module = ir.Module.parse(text)
            if patch is not None:
                patch(module)
            path = root / f"{name}.so"
            t0 = time.perf_counter()
            timings = Timings()
            emit_library(module, path, timings=timings, **kw)
            return Compiled(str(path), time.perf_counter() - t0, timings)

    return build
